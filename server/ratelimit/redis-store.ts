// Rate-limit store on a plain Redis server over TCP (REDIS_URL), through ioredis.
import { Redis } from "ioredis";
import { createLibraryStore } from "./library-store";
import { createScriptAdapter } from "./redis-script-adapter";
import { KEY_PREFIX, type LimitStore } from "./store";

/**
 * An ioredis client suited to a fail-open limiter: commands fail at once while disconnected
 * (no offline queue, no per-request retries) instead of piling up, commands the server sits on
 * are dropped after `commandTimeoutMs`, and the client keeps reconnecting in the background so
 * limiting resumes when Redis returns.
 */
export function createLimiterRedisClient(url: string, opts: { commandTimeoutMs?: number } = {}): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: opts.commandTimeoutMs ?? 1000,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    // A request's layers are counted in the same tick: send their scripts in one write.
    enableAutoPipelining: true,
  });
  // Failures surface through the limiter's fail-open log; without a listener ioredis prints each one.
  client.on("error", () => {});
  return client;
}

function waitUntilReady(client: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new Error(`Redis not ready after ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}

/** A store over an ioredis client; `ownsClient` makes close() quit it. */
export function createRedisStore(client: Redis, opts: { ownsClient?: boolean } = {}): LimitStore {
  // Until the first connection is up, a call waits for it (bounded by the fail-open timeout) rather
  // than failing at once: a process's first requests are limited, not admitted by failure. Once
  // connected, a lost connection fails fast again (no offline queue).
  let firstConnection: Promise<void> | null =
    client.status === "ready"
      ? null
      : new Promise<void>((resolve) => {
          client.once("ready", resolve);
          setTimeout(resolve, FIRST_CONNECTION_WAIT_MS).unref();
        }).then(() => {
          firstConnection = null;
        });
  const store = createLibraryStore({
    kind: "redis",
    redis: createScriptAdapter(client),
    async clear() {
      if (client.status !== "ready") await waitUntilReady(client, 2000);
      let cursor = "0";
      do {
        const [next, keys] = await client.scan(cursor, "MATCH", `${KEY_PREFIX}:*`, "COUNT", 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== "0");
    },
    ready: (timeoutMs) => (client.status === "ready" ? Promise.resolve() : waitUntilReady(client, timeoutMs).catch(() => {})),
    async close() {
      if (opts.ownsClient) client.disconnect();
    },
  });
  return {
    ...store,
    async limit(identifier, limit, windowMs, rate) {
      if (firstConnection) await firstConnection;
      return store.limit(identifier, limit, windowMs, rate);
    },
  };
}

/**
 * How long after the client is created calls wait for its first connection. Longer than any
 * fail-open timeout: the guard, not this wait, decides how long one request waits.
 */
const FIRST_CONNECTION_WAIT_MS = 10_000;
