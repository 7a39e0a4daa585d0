// A LimitStore over @upstash/ratelimit's slidingWindow, for both Redis-backed stores: the Upstash
// REST client as is, or ioredis through the script adapter.
import { Ratelimit } from "@upstash/ratelimit";
import { answeredWithin } from "./answered-within";
import type { LimitStore, StoreKind, StoreResult } from "./store";

type RatelimitRedis = ConstructorParameters<typeof Ratelimit>[0]["redis"];

export function createLibraryStore(opts: {
  kind: StoreKind;
  /** Namespace of the store's keys (keyPrefix()). */
  prefix: string;
  redis: unknown; // @upstash/redis client, or anything answering evalsha/eval like one
  /** A call without an answer after this fails (a TimeoutError: the store counts as down). */
  callTimeoutMs: number;
  probe: () => Promise<unknown>;
  clear: () => Promise<void>;
  close: () => Promise<void>;
  ready?: (timeoutMs: number) => Promise<void>;
}): LimitStore {
  const limiters = new Map<string, Ratelimit>();
  const limiterFor = (limit: number, windowMs: number) => {
    const id = `${limit}/${windowMs}`;
    let rl = limiters.get(id);
    if (!rl) {
      rl = new Ratelimit({
        redis: opts.redis as RatelimitRedis,
        limiter: Ratelimit.slidingWindow(limit, `${windowMs} ms`),
        prefix: opts.prefix,
        timeout: 0, // no timeout here: the library's would resolve as allowed; the client's own fails the call
        // The library's cache blocks an identifier until the window end, stricter than the sliding
        // window itself and invisible to other processes; keep results exactly the script's.
        ephemeralCache: false,
        analytics: false,
        enableTelemetry: false,
      });
      limiters.set(id, rl);
    }
    return rl;
  };
  return {
    kind: opts.kind,
    async limit(identifier, limit, windowMs, rate = 1): Promise<StoreResult> {
      const r = await answeredWithin(limiterFor(limit, windowMs).limit(identifier, rate === 1 ? undefined : { rate }), opts.callTimeoutMs);
      return { success: r.success, limit: r.limit, remaining: r.remaining, reset: r.reset };
    },
    async probe() {
      await answeredWithin(opts.probe(), opts.callTimeoutMs);
    },
    clear: opts.clear,
    close: opts.close,
    ready: opts.ready,
  };
}
