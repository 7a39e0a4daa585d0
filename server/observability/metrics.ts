// The service's Prometheus metrics (prom-client), in one registry, and the one-line recorders the
// rest of the code calls at its instrumentation points. Nothing is recorded until the metrics
// listener enables it (METRICS_PORT, server/http/metrics-listener.ts): a process without a listener
// pays one boolean test per call. Every label value comes from a fixed set (route templates, layer
// names, outcomes, tool and provider names): never a tenant id, key, URL or row id.
//
// Scrape-time values (the webhook backlog, readiness) come from sources the HTTP layer registers
// (`setScrapeSources`), so this folder imports nothing above lib/.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { toAppError } from "../lib/errors";

export const registry = new Registry();
let enabled = false;

/** Whether metrics are being recorded (a metrics listener runs in this process). */
export const metricsEnabled = () => enabled;

/**
 * Starts recording, with Node's process and runtime metrics. prom-client's `*_total` gauges of
 * active handles, requests and resources are dropped: they repeat the sum of their per-type
 * siblings, and a gauge named `_total` fails `promtool check metrics`.
 */
export function enableMetrics(): void {
  if (enabled) return;
  enabled = true;
  collectDefaultMetrics({ register: registry });
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) registry.removeSingleMetric(name);
  // Known outcomes start at 0: a counter whose series appears already at 1 shows no increase(),
  // and the first dead letter of a process would raise no alert.
  for (const outcome of ["delivered", "retry", "permanent_fail"]) webhookAttempts.inc({ outcome }, 0);
  for (const outcome of ["delivered", "permanent_fail", "dead_letter"]) webhookDeliveries.inc({ outcome }, 0);
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

const httpDuration = new Histogram({
  name: "tdp_http_request_duration_seconds",
  help: "Time to answer an HTTP request on the lean front, by route template (never a raw path), method and status",
  labelNames: ["route", "method", "status"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
/** route -> method -> status -> its child (`labels()`), kept: a request after the first of its kind builds no label object. */
const httpSeries = new Map<string, Map<string, Map<number, Histogram.Internal<"route" | "method" | "status">>>>();
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One answered request: `route` is a template (`/api/v1/offerings/{id}`), `startedAt` a `performance.now()` reading. */
export function observeHttpRequest(route: string, method: string | undefined, status: number, startedAt: number): void {
  if (!enabled) return;
  const m = method && METHODS.has(method) ? method : "other";
  let byMethod = httpSeries.get(route);
  if (!byMethod) httpSeries.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(m);
  if (!byStatus) byMethod.set(m, (byStatus = new Map()));
  let series = byStatus.get(status);
  if (!series) byStatus.set(status, (series = httpDuration.labels({ route, method: m, status: String(status) })));
  series.observe((performance.now() - startedAt) / 1000);
}

// ---------- rate limits ----------

const limitDecisions = new Counter({
  name: "tdp_ratelimit_decisions_total",
  help: "Rate-limit decisions per layer (key, tenant, user, tool, ip, failed-auth-ip): allowed or limited",
  labelNames: ["layer", "outcome"] as const,
  registers: [registry],
});
type DecisionSeries = { allowed: Counter.Internal; limited: Counter.Internal };
/** A layer's two children, kept; both series begin (at 0) with its first decision: its first refusal then shows in increase(). */
const decisionSeries = new Map<string, DecisionSeries>();

function decisionSeriesOf(layer: string): DecisionSeries {
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
  if (!enabled) return;
  for (let i = 0; i < active.length; i++) {
    const series = decisionSeriesOf(active[i]!.layer.name);
    (results[i]?.success ? series.allowed : series.limited).inc();
  }
}

const storeErrors = new Counter({
  name: "tdp_ratelimit_store_errors_total",
  help: "Calls and probes the shared rate-limit store (Redis, Upstash) failed, by reason (error or timeout); limits are then counted in memory",
  labelNames: ["store", "reason"] as const,
  registers: [registry],
});

/** What this process's limiter knows of its shared store (readiness reports it; limits fail open to memory). */
const limiterStore = { down: false };
export const rateLimitStoreDown = () => limiterStore.down;

/** A call or probe of the shared store failed: it counts as down until a probe answers. */
export function noteRateLimitStoreFailure(store: string, reason: "error" | "timeout"): void {
  limiterStore.down = true;
  if (enabled) storeErrors.inc({ store, reason });
}

/** A probe of the shared store answered: calls go back to it. */
export function noteRateLimitStoreRecovered(): void {
  limiterStore.down = false;
}

// Registered, read only at scrape time.
new Gauge({
  name: "tdp_ratelimit_store_up",
  help: "1 while the shared rate-limit store answers, 0 while this process limits in its own memory (no series without a shared store)",
  labelNames: ["store"] as const,
  registers: [registry],
  collect() {
    this.reset();
    const kind = sources.sharedLimitStore?.();
    if (kind) this.set({ store: kind }, limiterStore.down ? 0 : 1);
  },
});

// ---------- webhooks ----------

const webhookAttempts = new Counter({
  name: "tdp_webhook_attempts_total",
  help: "Webhook delivery attempts by outcome (delivered, retry, permanent_fail)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});
const webhookAttemptDuration = new Histogram({
  name: "tdp_webhook_attempt_duration_seconds",
  help: "Time of one webhook delivery attempt (the consumer's answer, or the timeout), by outcome",
  labelNames: ["outcome"] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});
const webhookDeliveries = new Counter({
  name: "tdp_webhook_deliveries_total",
  help: "Webhook deliveries that reached a final state: delivered, permanent_fail, or dead_letter (the retry ladder ran out)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** One attempt sent: its outcome, how long it took, and the delivery's state after it (counted once recorded). */
export function recordWebhookAttempt(outcome: string, deliveryStatus: string, durationMs: number, recorded: boolean): void {
  if (!enabled) return;
  webhookAttempts.inc({ outcome });
  webhookAttemptDuration.observe({ outcome }, durationMs / 1000);
  if (recorded && deliveryStatus !== "pending") webhookDeliveries.inc({ outcome: deliveryStatus });
}

/** Due deliveries (capped, see the source) and the age of the oldest; null when the database did not answer. */
type DeliveryBacklog = { due: number; oldestDueAgeSeconds: number };

const backlogDue = new Gauge({
  name: "tdp_webhook_backlog_due",
  help: "Webhook deliveries due now and not yet delivered (all tenants; the same value from every process)",
  registers: [registry],
  async collect() {
    await readBacklog();
  },
});
const backlogAge = new Gauge({
  name: "tdp_webhook_backlog_oldest_due_age_seconds",
  help: "How long the oldest due webhook delivery has been due (0 with no backlog)",
  registers: [registry],
  async collect() {
    await readBacklog();
  },
});

/** One query per scrape for both backlog gauges. */
let backlogRead: Promise<void> | null = null;
function readBacklog(): Promise<void> {
  backlogRead ??= (async () => {
    const backlog = await sources.webhookBacklog?.().catch(() => null);
    backlogDue.reset();
    backlogAge.reset();
    if (backlog) {
      backlogDue.set(backlog.due);
      backlogAge.set(backlog.oldestDueAgeSeconds);
    }
  })().finally(() => setImmediate(() => (backlogRead = null)));
  return backlogRead;
}

// ---------- receivers and tools ----------

const receiverMessages = new Counter({
  name: "tdp_receiver_messages_total",
  help: "Requests the provider receivers answered, by provider and outcome (ok, or the error code)",
  labelNames: ["provider", "outcome"] as const,
  registers: [registry],
});

/** Counts a receiver's answer and hands it back: `return countReceiverAnswer(provider, answer)`. */
export function countReceiverAnswer<A extends { status: number }>(provider: string, answer: A): A {
  if (enabled) receiverMessages.inc({ provider, outcome: outcomeOfStatus(answer.status) });
  return answer;
}

const toolCalls = new Counter({
  name: "tdp_tool_calls_total",
  help: "Agent tool calls past authentication, rate limits and scope, by tool and outcome (ok, or the error code)",
  labelNames: ["tool", "outcome"] as const,
  registers: [registry],
});

/**
 * Counts a tool call from its tRPC middleware result and hands the result back:
 * `.use(({ next }) => countToolCall(tool.name, next()))`. A failure's status decides its outcome (503: `unavailable`).
 */
export async function countToolCall<R extends { ok: boolean; error?: unknown }>(tool: string, result: Promise<R>): Promise<R> {
  const r = await result;
  if (enabled) toolCalls.inc({ tool, outcome: r.ok ? "ok" : outcomeOfStatus(toAppError(r.error).status) });
  return r;
}

// ---------- readiness ----------

/** One readiness evaluation: each check's answer (`ok` or why not) and whether it fails readiness. */
export type Readiness = { ready: boolean; checks: Record<string, { value: string; failing: boolean }> };

const readyGauge = new Gauge({
  name: "tdp_ready",
  help: "1 when /readyz would answer 200 (the load balancer sends this process traffic), else 0",
  registers: [registry],
  async collect() {
    await readReadiness();
  },
});
const readinessCheck = new Gauge({
  name: "tdp_readiness_check_ok",
  help: "Per readiness check: 1 passing, 0 failing (see /readyz for the reason)",
  labelNames: ["check"] as const,
  registers: [registry],
  async collect() {
    await readReadiness();
  },
});

let readinessRead: Promise<void> | null = null;
function readReadiness(): Promise<void> {
  readinessRead ??= (async () => {
    const readiness = await sources.readiness?.().catch(() => null);
    readyGauge.reset();
    readinessCheck.reset();
    if (!readiness) return;
    readyGauge.set(readiness.ready ? 1 : 0);
    for (const [check, { failing }] of Object.entries(readiness.checks)) readinessCheck.set({ check }, failing ? 0 : 1);
  })().finally(() => setImmediate(() => (readinessRead = null)));
  return readinessRead;
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
