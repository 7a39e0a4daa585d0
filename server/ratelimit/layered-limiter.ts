// Several sliding-window layers checked together; the most restrictive one decides.
import type { LimitStore, StoreResult } from "./store";
import { countRateLimitDecisions } from "../observability/metrics";

export type LimitDecision = { allowed: true; headers: Record<string, string> } | { allowed: false; headers: Record<string, string>; message: string };

export type LayerConfig = {
  /** Names the identifier in check() and namespaces the key: `<prefix>:<name>:<identifier>:<window>`. */
  name: string;
  limit: number;
  windowMs: number;
  /** The 429 message when this layer refuses. */
  message: string;
};

export type LayeredLimiterOptions = {
  /** Answers every call: a shared store is wrapped in its in-memory fallback (fallback-store.ts). */
  store: LimitStore;
  /** In reporting order: the first layer present in a check supplies the success headers. */
  layers: LayerConfig[];
  /** Admit everything with no headers (benchmarks). */
  disabled?: boolean;
};

export interface LayeredLimiter {
  /**
   * Identifier per layer name; a layer whose identifier is null/undefined is skipped. `weight`
   * (default 1) is how many requests the check counts at once (an MCP batch of messages): all of
   * them are admitted, or none.
   */
  check(ids: Record<string, string | null | undefined>, weight?: number): Promise<LimitDecision>;
}

const toSeconds = (ms: number) => Math.ceil(ms / 1000);

function rateHeaders(r: StoreResult): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(r.limit),
    "X-RateLimit-Remaining": String(r.remaining),
    "X-RateLimit-Reset": String(toSeconds(r.reset)),
  };
}

function refusalHeaders(r: StoreResult, now: number): Record<string, string> {
  return { "Retry-After": String(Math.max(1, toSeconds(r.reset - now))), ...rateHeaders(r) };
}

/*
 * Layers are counted concurrently (one round trip of latency, not one per layer), so a request
 * one layer refuses has already taken a token from the layers that admitted it. We give those
 * tokens back (a count of minus the weight) before answering the 429: a refused request then counts against
 * no layer, so one key hammering past its own limit cannot use up its tenant's shared budget and
 * starve the tenant's other keys and users. A refund that lands in the next window is lost,
 * erring towards stricter limiting.
 */
export function createLayeredLimiter(opts: LayeredLimiterOptions): LayeredLimiter {
  const { store, layers } = opts;
  const count = (layer: LayerConfig, id: string, rate: number) => store.limit(`${layer.name}:${id}`, layer.limit, layer.windowMs, rate);

  const activeLayers = (ids: Record<string, string | null | undefined>) =>
    layers.flatMap((layer) => {
      const id = ids[layer.name];
      return id == null ? [] : [{ layer, id }];
    });

  return {
    async check(ids, weight = 1) {
      if (opts.disabled) return { allowed: true, headers: {} };
      const active = activeLayers(ids);
      const results = await Promise.all(active.map(({ layer, id }) => count(layer, id, weight)));
      countRateLimitDecisions(active, results);
      const now = Date.now();

      // Of the refusing layers, report the one that frees up last (so a retry after Retry-After
      // is not refused by the other); on a tie, the earlier (narrower) layer.
      let refusal: { layer: LayerConfig; result: StoreResult } | undefined;
      results.forEach((result, i) => {
        if (!result.success && (!refusal || result.reset > refusal.result.reset)) refusal = { layer: active[i]!.layer, result };
      });

      if (refusal) {
        await Promise.all(results.map((result, i) => (result.success ? count(active[i]!.layer, active[i]!.id, -weight) : null)));
        return { allowed: false, headers: refusalHeaders(refusal.result, now), message: refusal.layer.message };
      }
      const reported = results[0];
      return { allowed: true, headers: reported ? rateHeaders(reported) : {} };
    },
  };
}
