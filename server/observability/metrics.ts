// The service's Prometheus metrics: the one-line recorders the rest of the code calls at its
// instrumentation points, over prom-client's instruments (metric-instruments.ts). Nothing is
// recorded, and prom-client is not even loaded, until the metrics listener enables them
// (METRICS_PORT, server/http/metrics-listener.ts): a process without a listener pays one test per
// call. Every label value comes from a fixed set (route templates, layer names, outcomes, tool and
// provider names): never a tenant id, key, URL or row id.
//
// Scrape-time values (the webhook backlog, readiness) come from sources the HTTP layer registers
// (`setScrapeSources`), so this folder imports nothing above lib/.
import type { Counter, Histogram, Registry } from "prom-client";
import { toAppError } from "../lib/errors";
import type { DeliveryBacklog, Instruments, Readiness } from "./metric-instruments";

export type { Readiness };

let instruments: Instruments | null = null;

/** Whether metrics are being recorded (a metrics listener runs in this process). */
export const metricsEnabled = () => instruments !== null;

/** Loads prom-client and starts recording (once); the registry the listener renders. */
export async function enableMetrics(): Promise<Registry> {
  if (!instruments) {
    const { createInstruments } = await import("./metric-instruments");
    instruments ??= createInstruments({
      sharedLimitStore: () => ({ kind: sources.sharedLimitStore?.() ?? null, down: limiterStore.down }),
      webhookBacklog: async () => (await sources.webhookBacklog?.()) ?? null,
      readiness: async () => (await sources.readiness?.()) ?? null,
    });
  }
  return instruments.registry;
}

// ---------- outcomes ----------

/** `ok`, or the error code an answer's status stands for (503: `unavailable`): a fixed set of labels. */
export function outcomeOfStatus(status: number): string {
  if (status < 400) return "ok";
  switch (status) {
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 429:
      return "rate_limited";
    case 503:
      return "unavailable";
    default:
      return status < 500 ? "bad_request" : "internal_error";
  }
}

// ---------- HTTP ----------

/** route -> method -> status -> its child (`labels()`), kept: a request after the first of its kind builds no label object. */
const httpSeries = new Map<string, Map<string, Map<number, Histogram.Internal<"route" | "method" | "status">>>>();
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One answered request: `route` is a template (`/api/v1/offerings/{id}`), `startedAt` a `performance.now()` reading. */
export function observeHttpRequest(route: string, method: string | undefined, status: number, startedAt: number): void {
  if (!instruments) return;
  const m = method && METHODS.has(method) ? method : "other";
  let byMethod = httpSeries.get(route);
  if (!byMethod) httpSeries.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(m);
  if (!byStatus) byMethod.set(m, (byStatus = new Map()));
  let series = byStatus.get(status);
  if (!series) byStatus.set(status, (series = instruments.httpDuration.labels({ route, method: m, status: String(status) })));
  series.observe((performance.now() - startedAt) / 1000);
}

// ---------- rate limits ----------

type DecisionSeries = { allowed: Counter.Internal; limited: Counter.Internal };
/** A layer's two children, kept; both series begin (at 0) with its first decision: its first refusal then shows in increase(). */
const decisionSeries = new Map<string, DecisionSeries>();

function decisionSeriesOf(limitDecisions: Instruments["limitDecisions"], layer: string): DecisionSeries {
  let series = decisionSeries.get(layer);
  if (!series) {
    series = { allowed: limitDecisions.labels({ layer, outcome: "allowed" }), limited: limitDecisions.labels({ layer, outcome: "limited" }) };
    series.allowed.inc(0);
    series.limited.inc(0);
    decisionSeries.set(layer, series);
  }
  return series;
}

/** One check's layers (`active[i].layer.name`) and each layer's store answer (`results[i].success`). */
export function countRateLimitDecisions(active: readonly { layer: { name: string } }[], results: readonly { success: boolean }[]): void {
  if (!instruments) return;
  for (let i = 0; i < active.length; i++) {
    const series = decisionSeriesOf(instruments.limitDecisions, active[i]!.layer.name);
    (results[i]?.success ? series.allowed : series.limited).inc();
  }
}

/** What this process's limiter knows of its shared store (readiness reports it; limits fail open to memory). */
const limiterStore = { down: false };
export const rateLimitStoreDown = () => limiterStore.down;

/** A call or probe of the shared store failed: it counts as down until a probe answers. */
export function noteRateLimitStoreFailure(store: string, reason: "error" | "timeout"): void {
  limiterStore.down = true;
  instruments?.storeErrors.inc({ store, reason });
}

/** A probe of the shared store answered: calls go back to it. */
export function noteRateLimitStoreRecovered(): void {
  limiterStore.down = false;
}

// ---------- webhooks ----------

/** One attempt sent: its outcome, how long it took, and the delivery's state after it (counted once recorded). */
export function recordWebhookAttempt(outcome: string, deliveryStatus: string, durationMs: number, recorded: boolean): void {
  if (!instruments) return;
  instruments.webhookAttempts.inc({ outcome });
  instruments.webhookAttemptDuration.observe({ outcome }, durationMs / 1000);
  if (recorded && deliveryStatus !== "pending") instruments.webhookDeliveries.inc({ outcome: deliveryStatus });
}

// ---------- receivers and tools ----------

/** Counts a receiver's answer and hands it back: `return countReceiverAnswer(provider, answer)`. */
export function countReceiverAnswer<A extends { status: number }>(provider: string, answer: A): A {
  instruments?.receiverMessages.inc({ provider, outcome: outcomeOfStatus(answer.status) });
  return answer;
}

/**
 * Counts a tool call from its tRPC middleware result and hands the result back:
 * `.use(({ next }) => countToolCall(tool.name, next()))`. A failure's status decides its outcome (503: `unavailable`).
 */
export async function countToolCall<R extends { ok: boolean; error?: unknown }>(tool: string, result: Promise<R>): Promise<R> {
  const r = await result;
  instruments?.toolCalls.inc({ tool, outcome: r.ok ? "ok" : outcomeOfStatus(toAppError(r.error).status) });
  return r;
}

// ---------- scrape-time sources ----------

type Sources = {
  /** The shared store's kind (`redis`, `upstash`), or null when limits live in memory only. */
  sharedLimitStore?: () => string | null;
  webhookBacklog?: () => Promise<DeliveryBacklog | null>;
  readiness?: () => Promise<Readiness>;
};
const sources: Sources = {};

/** Registered once by the process that serves metrics (they read the database and the readiness checks). */
export function setScrapeSources(given: Sources): void {
  Object.assign(sources, given);
}
