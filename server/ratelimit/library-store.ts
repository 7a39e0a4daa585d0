// A LimitStore over @upstash/ratelimit's slidingWindow, for both Redis-backed stores: the Upstash
// REST client as is, or ioredis through the script adapter.
import { Ratelimit } from "@upstash/ratelimit";
import { answeredWithin } from "./answered-within";
import type { LimitStore, StoreKind, StoreResult } from "./store";

type RatelimitRedis = ConstructorParameters<typeof Ratelimit>[0]["redis"];
type EvalClient = { eval(script: string, keys: string[], args: (string | number)[]): Promise<unknown> };

/*
 * A weighted count (rate > 1: an MCP batch of several messages) in the library's own buckets, all
 * or nothing. The library's script checks only that the bucket is not yet full and then adds the
 * whole rate: a rate that does not fit is counted yet reported refused, and whether a refusal was
 * counted cannot be told from its answer (both read -1). This script is the library's sliding
 * window (2.2.0: same keys, same weighting of the previous window, same expiry) with the check
 * the weight needs: it adds the rate only when all of it fits. Returns the remaining count, or -1.
 */
const WEIGHTED_SLIDING_WINDOW = `
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
local previous = tonumber(redis.call("GET", KEYS[2]) or "0")
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
previous = math.floor((1 - (now % window) / window) * previous)
if previous + current + rate > limit then
  return -1
end
local counted = redis.call("INCRBY", KEYS[1], rate)
if counted == rate then
  redis.call("PEXPIRE", KEYS[1], window * 2 + 1000)
end
return limit - (counted + previous)
`;

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
      if (rate > 1) {
        const now = Date.now();
        const window = Math.floor(now / windowMs);
        const key = `${opts.prefix}:${identifier}`;
        const counted = (opts.redis as EvalClient).eval(WEIGHTED_SLIDING_WINDOW, [`${key}:${window}`, `${key}:${window - 1}`], [limit, now, windowMs, rate]);
        const answer = counted.then((n) => {
          const remaining = Number(n);
          return { success: remaining >= 0, limit, remaining: Math.max(0, remaining), reset: (window + 1) * windowMs };
        });
        return answeredWithin(answer, opts.callTimeoutMs);
      }
      const answer = limiterFor(limit, windowMs)
        .limit(identifier, rate === 1 ? undefined : { rate })
        .then((r) => ({ success: r.success, limit: r.limit, remaining: r.remaining, reset: r.reset }));
      return answeredWithin(answer, opts.callTimeoutMs);
    },
    async probe() {
      await answeredWithin(opts.probe(), opts.callTimeoutMs);
    },
    clear: opts.clear,
    close: opts.close,
    ready: opts.ready,
  };
}
