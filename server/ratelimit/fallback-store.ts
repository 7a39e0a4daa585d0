// Fail-open means the shared store is unavailable, never that this process is busy. A call the
// shared store (Redis, Upstash) answers is its decision, however long the answer takes within the
// store's own command timeout. A call it fails (an error, or that timeout) marks it down: from then
// on this process counts every request in its own memory with the same limits (approximate across
// processes, never unlimited) while a background probe asks the store every `probeIntervalMs`
// whether it is back; the first probe it answers switches calls back to it.
//
// One window's admissions in this process never exceed the limit, however slow or down the store. The
// store knows nothing of what memory admitted and memory nothing of what the store did, so each
// takes the other's count into account: memory admits only the share the store's last answer for
// that identifier left (its count in that window; a refusal leaves none), and once the store
// answers again, an admission it grants is refused while memory's own count for that identifier
// in the window would take the total past the limit. A call this process gave up on (timed out)
// is decided in memory; should the slow store still count it, that count is given back.
//
// Logging: one warning when an outage starts (with the reason) and one "recovered" line when it
// ends. An outage ends only once the store has stayed up for `settleMs` after coming back; a store
// that fails again within that time is flapping, and the failure belongs to the same outage (no new
// warning; the recovered line counts the flaps). A later outage is logged again, however soon.
import { log } from "../lib/log";
import { StoreTimeoutError } from "./answered-within";
import { createMemoryStore } from "./memory-store";
import { noteRateLimitStoreFailure, noteRateLimitStoreRecovered } from "../observability/metrics";
import type { LimitStore, StoreResult } from "./store";

export type FallbackOptions = {
  /** While the store is down, how often a probe asks whether it is back (default 1 s). */
  probeIntervalMs?: number;
  /** How long the store must stay up before an outage counts as over (default 10 s). */
  settleMs?: number;
};

type Outage = { startedAt: number; flaps: number; upSince: number | null };

/** The highest count the store reported for an identifier in one window. */
type StoreCount = { window: number; windowMs: number; used: number };

const SWEEP_EVERY_MS = 60_000;

/**
 * The store's count of each identifier as its answers told it. An admission's answer gives the
 * count exactly (limit - remaining), a refusal at least `limit - rate + 1`. Answers of refunds are
 * left out: answers over parallel requests (Upstash's REST) may arrive out of order, and only
 * the highest count is safe to keep; the count then errs high by the refunds, never low.
 */
function storeCounts() {
  const counts = new Map<string, StoreCount>();
  let nextSweepAt = 0;
  return {
    note(identifier: string, windowMs: number, rate: number, r: StoreResult) {
      if (rate <= 0) return;
      const window = Math.round(r.reset / windowMs) - 1;
      const used = r.success ? r.limit - r.remaining : r.limit - rate + 1;
      const known = counts.get(identifier);
      if (!known || known.window < window || known.windowMs !== windowMs) counts.set(identifier, { window, windowMs, used });
      else if (known.window === window) known.used = Math.max(known.used, used);
      const now = Date.now();
      if (now < nextSweepAt) return;
      nextSweepAt = now + SWEEP_EVERY_MS;
      for (const [id, c] of counts) if (Math.floor(now / c.windowMs) > c.window + 1) counts.delete(id);
    },
    /** The store's count now, by the sliding window: the previous window's count weighs by its overlap. */
    at(identifier: string, windowMs: number, now: number): number {
      const known = counts.get(identifier);
      if (!known || known.windowMs !== windowMs) return 0;
      const window = Math.floor(now / windowMs);
      if (known.window === window) return known.used;
      if (known.window === window - 1) return Math.floor((1 - (now % windowMs) / windowMs) * known.used);
      return 0;
    },
    clear: () => counts.clear(),
  };
}

const isTimeout = (err: unknown) => err instanceof Error && (err.name === "TimeoutError" || /timed? ?out/i.test(err.message));

export function withMemoryFallback(primary: LimitStore, opts: FallbackOptions = {}): LimitStore {
  const probeIntervalMs = opts.probeIntervalMs ?? 1000;
  const settleMs = opts.settleMs ?? 10_000;
  const memory = createMemoryStore();
  const counted = storeCounts();
  let down = false;
  let closed = false;
  let outage: Outage | null = null;
  let probeTimer: NodeJS.Timeout | undefined;
  let settleTimer: NodeJS.Timeout | undefined;

  function markDown(err: unknown) {
    if (down || closed) return;
    down = true;
    clearTimeout(settleTimer);
    if (outage) {
      outage.flaps++;
      outage.upSince = null;
    } else {
      outage = { startedAt: Date.now(), flaps: 0, upSince: null };
      log.warn(
        {
          store: primary.kind,
          reason: isTimeout(err) ? "timeout" : "error",
          error: err,
        },
        "rate limiter store unavailable; limiting in this process's memory until it recovers",
      );
    }
    probeTimer = setTimeout(probe, probeIntervalMs).unref();
  }

  async function probe() {
    try {
      await primary.probe();
    } catch (err) {
      noteRateLimitStoreFailure(primary.kind, isTimeout(err) ? "timeout" : "error");
      if (!closed) probeTimer = setTimeout(probe, probeIntervalMs).unref();
      return;
    }
    if (closed) return;
    down = false;
    noteRateLimitStoreRecovered();
    outage!.upSince = Date.now();
    settleTimer = setTimeout(endOutage, settleMs).unref();
  }

  function endOutage() {
    if (down || !outage?.upSince) return;
    log.info(
      {
        store: primary.kind,
        unavailable_ms: outage.upSince - outage.startedAt,
        flaps: outage.flaps,
      },
      "rate limiter store recovered",
    );
    outage = null;
  }

  const giveBack = (identifier: string, limit: number, windowMs: number, rate: number) =>
    void primary.limit(identifier, limit, windowMs, -rate).catch(() => {});

  /** The store's answer, refused when it and what memory admitted in the window exceed the limit. */
  function withMemoryCount(identifier: string, limit: number, windowMs: number, rate: number, r: StoreResult): StoreResult {
    counted.note(identifier, windowMs, rate, r);
    if (rate <= 0 || !r.success) return r;
    const inMemory = memory.used(identifier, windowMs);
    if (inMemory <= 0) return r;
    if (r.remaining >= inMemory) return { ...r, remaining: r.remaining - inMemory };
    giveBack(identifier, limit, windowMs, rate);
    return { success: false, limit: r.limit, remaining: 0, reset: r.reset };
  }

  /** Memory decides within the share of the limit the store's count leaves. */
  async function inMemory(identifier: string, limit: number, windowMs: number, rate: number): Promise<StoreResult> {
    const share = limit - counted.at(identifier, windowMs, Date.now());
    return { ...(await memory.limit(identifier, share, windowMs, rate)), limit };
  }

  return {
    kind: primary.kind,
    async limit(identifier, limit, windowMs, rate = 1): Promise<StoreResult> {
      if (!down) {
        try {
          return withMemoryCount(identifier, limit, windowMs, rate, await primary.limit(identifier, limit, windowMs, rate));
        } catch (err) {
          noteRateLimitStoreFailure(primary.kind, isTimeout(err) ? "timeout" : "error");
          markDown(err);
          if (rate <= 0) {
            // A refund the store failed may still be applied there: applied in memory too, it would
            // be given back twice. Dropped, the count errs high by it.
            return inMemory(identifier, limit, windowMs, 0);
          }
          if (err instanceof StoreTimeoutError) {
            (err.late as Promise<StoreResult>).then(
              (late) => late.success && giveBack(identifier, limit, windowMs, rate),
              () => {},
            );
          }
        }
      }
      return inMemory(identifier, limit, windowMs, rate);
    },
    probe: () => primary.probe(),
    async clear() {
      counted.clear();
      await memory.clear();
      await primary.clear();
    },
    ready: primary.ready,
    async close() {
      closed = true;
      clearTimeout(probeTimer);
      clearTimeout(settleTimer);
      counted.clear();
      await memory.close();
      await primary.close();
    },
  };
}
