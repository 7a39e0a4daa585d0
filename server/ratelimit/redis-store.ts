// Rate-limit store on a plain Redis server over TCP (REDIS_URL), through ioredis.
import { Redis } from "ioredis";
import { createLibraryStore } from "./library-store";
import { createScriptAdapter } from "./redis-script-adapter";
import { keyPrefix, type LimitStore } from "./store";

const CONNECT_TIMEOUT_MS = 1000;
const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
/** ioredis's own command timeout, a multiple of the store's: it only clears commands a hung server never answers. */
const BACKSTOP_FACTOR = 10;
/** The command timeout each limiter client was made with. */
const commandTimeouts = new WeakMap<Redis, number>();

/**
 * An ioredis client suited to a limiter with an in-memory fallback (fallback-store.ts): commands
 * fail at once while disconnected (no offline queue, no per-request retries) instead of piling up,
 * a command the server sits on fails after `commandTimeoutMs` (judged by library-store.ts, see
 * answered-within.ts), and the client keeps reconnecting in the background so the store can come back.
 */
export function createLimiterRedisClient(url: string, opts: { commandTimeoutMs?: number } = {}): Redis {
  const commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: commandTimeoutMs * BACKSTOP_FACTOR,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    // A request's layers are counted in the same tick: send their scripts in one write.
    enableAutoPipelining: true,
  });
  // Failures surface through the limiter's outage log; without a listener ioredis prints each one.
  client.on("error", () => {});
  commandTimeouts.set(client, commandTimeoutMs);
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

/**
 * Settles when the client's first connection attempt has: connected, failed, or not answered
 * within the connect timeout (plus a margin).
 */
function firstAttempt(client: Redis): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off("ready", done).off("error", done).off("end", done);
      resolve();
    };
    const timer = setTimeout(done, CONNECT_TIMEOUT_MS + 500);
    client.once("ready", done).once("error", done).once("end", done);
  });
}

/** A store over an ioredis client; `ownsClient` makes close() quit it. */
export function createRedisStore(client: Redis, opts: { ownsClient?: boolean; prefix?: string } = {}): LimitStore {
  const prefix = opts.prefix ?? keyPrefix();
  // Until the first connection attempt has settled, a call waits for it rather than failing at
  // once: a process's first requests are counted in Redis, not in memory because the socket was
  // still opening. Afterwards a lost connection fails calls at once (no offline queue).
  let connecting: Promise<void> | null = client.status === "ready" ? null : firstAttempt(client).then(() => void (connecting = null));
  const store = createLibraryStore({
    kind: "redis",
    prefix,
    redis: createScriptAdapter(client),
    callTimeoutMs: commandTimeouts.get(client) ?? DEFAULT_COMMAND_TIMEOUT_MS,
    probe: () => client.ping(),
    async clear() {
      if (client.status !== "ready") await waitUntilReady(client, 2000);
      let cursor = "0";
      do {
        const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
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
      if (connecting) await connecting;
      return store.limit(identifier, limit, windowMs, rate);
    },
  };
}
