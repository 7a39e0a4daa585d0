// The Prometheus instruments (prom-client), built when metrics are enabled (METRICS_PORT): a process
// that serves no metrics never loads prom-client (about 20 MB of an idle process). The recorders
// that feed these, and their fixed label sets, are in metrics.ts.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** One readiness evaluation: each check's answer (`ok` or why not) and whether it fails readiness. */
export type Readiness = { ready: boolean; checks: Record<string, { value: string; failing: boolean }> };

/** Due deliveries (capped, see the source) and the age of the oldest; null when the database did not answer. */
export type DeliveryBacklog = { due: number; oldestDueAgeSeconds: number };

/** What the scrape reads when it happens: the shared store's kind and state, the webhook backlog, readiness. */
export type ScrapeReads = {
  sharedLimitStore: () => { kind: string | null; down: boolean };
  webhookBacklog: () => Promise<DeliveryBacklog | null>;
  readiness: () => Promise<Readiness | null>;
};

/**
 * Every instrument, in one registry, with Node's process and runtime metrics. prom-client's
 * `*_total` gauges of active handles, requests and resources are dropped: they repeat the sum of
 * their per-type siblings, and a gauge named `_total` fails `promtool check metrics`.
 */
export function createInstruments(reads: ScrapeReads) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) registry.removeSingleMetric(name);

  const httpDuration = new Histogram({
    name: "tdp_http_request_duration_seconds",
    help: "Time to answer an HTTP request on the lean front, by route template (never a raw path), method and status",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const limitDecisions = new Counter({
    name: "tdp_ratelimit_decisions_total",
    help: "Rate-limit decisions per layer (key, tenant, user, tool, ip, failed-auth-ip): allowed or limited",
    labelNames: ["layer", "outcome"] as const,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: "tdp_ratelimit_store_errors_total",
    help: "Calls and probes the shared rate-limit store (Redis, Upstash) failed, by reason (error or timeout); limits are then counted in memory",
    labelNames: ["store", "reason"] as const,
    registers: [registry],
  });
  // Registered, read only at scrape time.
  new Gauge({
    name: "tdp_ratelimit_store_up",
    help: "1 while the shared rate-limit store answers, 0 while this process limits in its own memory (no series without a shared store)",
    labelNames: ["store"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const { kind, down } = reads.sharedLimitStore();
      if (kind) this.set({ store: kind }, down ? 0 : 1);
    },
  });

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
  // Known outcomes start at 0: a counter whose series appears already at 1 shows no increase(),
  // and the first dead letter of a process would raise no alert.
  for (const outcome of ["delivered", "retry", "permanent_fail"]) webhookAttempts.inc({ outcome }, 0);
  for (const outcome of ["delivered", "permanent_fail", "dead_letter"]) webhookDeliveries.inc({ outcome }, 0);

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
      const backlog = await reads.webhookBacklog().catch(() => null);
      backlogDue.reset();
      backlogAge.reset();
      if (backlog) {
        backlogDue.set(backlog.due);
        backlogAge.set(backlog.oldestDueAgeSeconds);
      }
    })().finally(() => setImmediate(() => (backlogRead = null)));
    return backlogRead;
  }

  const receiverMessages = new Counter({
    name: "tdp_receiver_messages_total",
    help: "Requests the provider receivers answered, by provider and outcome (ok, or the error code)",
    labelNames: ["provider", "outcome"] as const,
    registers: [registry],
  });
  const toolCalls = new Counter({
    name: "tdp_tool_calls_total",
    help: "Agent tool calls past authentication, rate limits and scope, by tool and outcome (ok, or the error code)",
    labelNames: ["tool", "outcome"] as const,
    registers: [registry],
  });

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
      const readiness = await reads.readiness().catch(() => null);
      readyGauge.reset();
      readinessCheck.reset();
      if (!readiness) return;
      readyGauge.set(readiness.ready ? 1 : 0);
      for (const [check, { failing }] of Object.entries(readiness.checks)) readinessCheck.set({ check }, failing ? 0 : 1);
    })().finally(() => setImmediate(() => (readinessRead = null)));
    return readinessRead;
  }

  return { registry, httpDuration, limitDecisions, storeErrors, webhookAttempts, webhookAttemptDuration, webhookDeliveries, receiverMessages, toolCalls };
}

export type Instruments = ReturnType<typeof createInstruments>;
