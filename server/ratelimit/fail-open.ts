// Fail-open guard around a store call: a call that errors or takes longer than `timeoutMs` admits
// the request (returns null, so no rate-limit headers are invented), and the failure is logged at
// most once per `warnIntervalMs` per store rather than per request. The abandoned call is not
// cancelled; the stores bound its life (ioredis commandTimeout, Upstash request signal).
import { log } from "../log";
import type { LimitStore, StoreResult } from "./store";

export type FailOpenOptions = { timeoutMs: number; warnIntervalMs: number };

type Health = { lastWarnAt: number; suppressed: number; failing: boolean };
const healthByStore = new WeakMap<LimitStore, Health>();

function healthOf(store: LimitStore): Health {
  let h = healthByStore.get(store);
  if (!h) healthByStore.set(store, (h = { lastWarnAt: -Infinity, suppressed: 0, failing: false }));
  return h;
}

function reportFailure(store: LimitStore, reason: "timeout" | "error", opts: FailOpenOptions, err?: unknown) {
  const h = healthOf(store);
  h.failing = true;
  const now = Date.now();
  if (now - h.lastWarnAt < opts.warnIntervalMs) {
    h.suppressed++;
    return;
  }
  log.warn("rate limiter store unavailable; admitting requests (fail-open)", {
    store: store.kind,
    reason,
    error: err instanceof Error ? err.message : err === undefined ? undefined : String(err),
    suppressed_since_last_warning: h.suppressed,
  });
  h.lastWarnAt = now;
  h.suppressed = 0;
}

function reportSuccess(store: LimitStore) {
  const h = healthByStore.get(store);
  if (!h?.failing) return;
  h.failing = false;
  log.info("rate limiter store recovered", { store: store.kind });
}

/** The store's answer, or null when the request is admitted because the store failed or was slow. */
export async function limitFailOpen(
  store: LimitStore,
  call: () => Promise<StoreResult>,
  opts: FailOpenOptions,
): Promise<StoreResult | null> {
  let timer: NodeJS.Timeout | undefined;
  const pending = call();
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), opts.timeoutMs);
  });
  try {
    const outcome = await Promise.race([pending, timedOut]);
    if (outcome === "timeout") {
      pending.catch(() => {}); // it may still reject later; nobody is waiting for it
      reportFailure(store, "timeout", opts);
      return null;
    }
    reportSuccess(store);
    return outcome;
  } catch (err) {
    reportFailure(store, "error", opts, err);
    return null;
  } finally {
    clearTimeout(timer);
  }
}
