// Rate-limit store on Upstash Redis over REST (UPSTASH_REDIS_REST_URL / UPSTASH_REDIS_REST_TOKEN).
import { Redis } from "@upstash/redis";
import { createLibraryStore } from "./library-store";
import { keyPrefix, type LimitStore } from "./store";

export function createUpstashStore(opts: { url: string; token: string; requestTimeoutMs?: number; prefix?: string }): LimitStore {
  const prefix = opts.prefix ?? keyPrefix();
  const requestTimeoutMs = opts.requestTimeoutMs ?? 1000;
  const redis = new Redis({
    url: opts.url,
    token: opts.token,
    retry: false, // a failed call marks the store down (see fallback-store.ts); retrying would only pile up
    // Only a backstop for requests a hung endpoint never answers: the store's own timeout decides
    // (library-store.ts), after a busy process has read what already arrived.
    signal: () => AbortSignal.timeout(requestTimeoutMs * 10),
    enableTelemetry: false,
  });
  return createLibraryStore({
    kind: "upstash",
    prefix,
    redis,
    callTimeoutMs: requestTimeoutMs,
    probe: () => redis.ping(),
    async clear() {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, { match: `${prefix}:*`, count: 1000 });
        if (keys.length > 0) await redis.del(...keys);
        cursor = String(next);
      } while (cursor !== "0");
    },
    async close() {},
  });
}
