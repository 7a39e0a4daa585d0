// In-process store for the embedded default (no Redis configured). @upstash/ratelimit has no
// in-memory mode, so this is the library's slidingWindow Lua script (2.2.0) transcribed to JS:
// the current window's count plus the previous window's count weighted by how much of it still
// overlaps the sliding window, floored; a weighted count (rate > 1) follows library-store.ts's
// all-or-nothing script. Counts are per process, not shared across instances.
import type { LimitStore, StoreResult } from "./store";

type Counter = { count: number; expiresAt: number };

const SWEEP_EVERY_MS = 60_000;

export interface MemoryStore extends LimitStore {
  /** The sliding-window count of `identifier` now (what `limit` would weigh a new request against). */
  used(identifier: string, windowMs: number): number;
}

export function createMemoryStore(): MemoryStore {
  const counters = new Map<string, Counter>();
  let nextSweepAt = 0;

  const read = (key: string, now: number): number => {
    const c = counters.get(key);
    return c && c.expiresAt > now ? c.count : 0;
  };

  const sweep = (now: number) => {
    if (now < nextSweepAt) return;
    nextSweepAt = now + SWEEP_EVERY_MS;
    for (const [key, c] of counters) if (c.expiresAt <= now) counters.delete(key);
  };

  /** The current window's count and the previous window's, weighted by its overlap (the script's). */
  const counts = (identifier: string, windowMs: number, now: number) => {
    const window = Math.floor(now / windowMs);
    const currentKey = `${identifier}:${window}`;
    const previousRaw = read(`${identifier}:${window - 1}`, now);
    return { window, currentKey, current: read(currentKey, now), previous: Math.floor((1 - (now % windowMs) / windowMs) * previousRaw) };
  };

  return {
    kind: "memory",
    async limit(identifier, limit, windowMs, rate = 1): Promise<StoreResult> {
      const now = Date.now();
      sweep(now);
      const { window, currentKey, current, previous } = counts(identifier, windowMs, now);
      const reset = (window + 1) * windowMs;

      // For one request this is the script's `previous + current >= limit`; a weighted count
      // (library-store.ts) is refused unless all of it fits.
      if (rate > 0 && previous + current + rate > limit) return { success: false, limit, remaining: 0, reset };

      let counter = counters.get(currentKey);
      if (!counter || counter.expiresAt <= now) {
        // Same lifetime as the script's PEXPIRE: long enough to serve as the next "previous" window.
        counter = { count: 0, expiresAt: now + windowMs * 2 + 1000 };
        counters.set(currentKey, counter);
      }
      counter.count += rate;
      return { success: true, limit, remaining: Math.max(0, limit - (counter.count + previous)), reset };
    },
    used(identifier, windowMs) {
      if (counters.size === 0) return 0;
      const { current, previous } = counts(identifier, windowMs, Date.now());
      return current + previous;
    },
    async probe() {},
    async clear() {
      counters.clear();
    },
    async close() {
      counters.clear();
    },
  };
}
