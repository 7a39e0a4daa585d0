// Fail-open means the shared store is unavailable, never that this process is busy. A call the
// shared store (Redis, Upstash) answers is its decision, however long the answer takes within the
// store's own command timeout. A call it fails (an error, or that timeout) marks it down: from then
// on this process counts every request in its own memory with the same limits (approximate across
// processes, never unlimited) while a background probe asks the store every `probeIntervalMs`
// whether it is back; the first probe it answers switches calls back to it.
//
// Logging: one warning when an outage starts (with the reason) and one "recovered" line when it
// ends. An outage ends only once the store has stayed up for `settleMs` after coming back; a store
// that fails again within that time is flapping, and the failure belongs to the same outage (no new
// warning; the recovered line counts the flaps). A later outage is logged again, however soon.
import { log } from "../lib/log";
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

const isTimeout = (err: unknown) => err instanceof Error && (err.name === "TimeoutError" || /timed? ?out/i.test(err.message));

export function withMemoryFallback(primary: LimitStore, opts: FallbackOptions = {}): LimitStore {
  const probeIntervalMs = opts.probeIntervalMs ?? 1000;
  const settleMs = opts.settleMs ?? 10_000;
  const memory = createMemoryStore();
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
      log.warn("rate limiter store unavailable; limiting in this process's memory until it recovers", {
        store: primary.kind,
        reason: isTimeout(err) ? "timeout" : "error",
        error: err,
      });
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
    log.info("rate limiter store recovered", {
      store: primary.kind,
      unavailable_ms: outage.upSince - outage.startedAt,
      flaps: outage.flaps,
    });
    outage = null;
  }

  return {
    kind: primary.kind,
    async limit(identifier, limit, windowMs, rate): Promise<StoreResult> {
      if (!down) {
        try {
          return await primary.limit(identifier, limit, windowMs, rate);
        } catch (err) {
          noteRateLimitStoreFailure(primary.kind, isTimeout(err) ? "timeout" : "error");
          markDown(err);
        }
      }
      return memory.limit(identifier, limit, windowMs, rate);
    },
    probe: () => primary.probe(),
    async clear() {
      await memory.clear();
      await primary.clear();
    },
    ready: primary.ready,
    async close() {
      closed = true;
      clearTimeout(probeTimer);
      clearTimeout(settleTimer);
      await memory.close();
      await primary.close();
    },
  };
}
