// Shared by the over-the-wire Inngest tests: the app as a real server process (the lean front,
// which serves /api/inngest and runs the webhook engine), on the Inngest engine pointed at the
// harness (tests/helpers/inngest-server) or on the embedded worker; subscriptions and events made
// through the app; the delivery state both engines are compared on.
import { getDb } from "../../server/db/client";
import { MOUNT_ARGS, mountEnv, ROOT } from "../helpers/http-mounts";
import { call, tenantWithKey } from "../helpers/api";
import { dashboardCaller } from "../helpers/webhooks";
import { freePort, spawnServer, type Running } from "../../scripts/bench/services";
import { startInngestServer, type InngestServer } from "../helpers/inngest-server/inngest-server";

// Subscriptions are created in this process: their loopback consumers must pass its URL check too.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

export const SIGNING_KEY = `signkey-test-${"ab12".repeat(16)}`;
export const EVENT_KEY = "test-event-key";

/** Short ladder, short timeout, no breaker: the same for both engines. */
const DELIVERY_ENV = {
  WEBHOOK_ALLOW_LOOPBACK: "1",
  WEBHOOK_RETRY_DELAYS_MS: "0,100,100,100,100,100",
  WEBHOOK_ATTEMPT_TIMEOUT_MS: "3000",
  WEBHOOK_BREAKER_FAILURES: "1000",
  WEBHOOK_POLL_INTERVAL_MS: "100",
  LOG_LEVEL: "warn",
};

export type Engine = "embedded" | "inngest";

/**
 * The app on `engine` (on `port`, e.g. to restart it where Inngest knows it); on Inngest, with a
 * harness it is pointed at, synced before returning.
 */
export async function startApp(engine: Engine, env: Record<string, string | undefined> = {}, harness?: InngestServer, port?: number) {
  const inngest = engine === "inngest" ? (harness ?? (await startInngestServer({ signingKey: SIGNING_KEY, eventKey: EVENT_KEY }))) : undefined;
  const listenPort = port ?? (await freePort());
  const app: Running = await spawnServer(`app-${engine}`, MOUNT_ARGS.lean, {
    port: listenPort,
    cwd: ROOT,
    readyPath: "/api/v1",
    timeoutMs: 120_000,
    env: mountEnv({
      ...DELIVERY_ENV,
      // Where Inngest calls the app back (required with Inngest configured): the address it listens on.
      PUBLIC_BASE_URL: `http://127.0.0.1:${listenPort}`,
      ...(inngest?.env() ?? { INNGEST_BASE_URL: undefined, INNGEST_EVENT_KEY: undefined, INNGEST_SIGNING_KEY: undefined }),
      ...env,
    }),
  });
  if (inngest && !inngest.functions().length) {
    const synced = await inngest.sync(`${app.url}/api/inngest`);
    if (synced.status !== 200) throw new Error(`sync failed: ${JSON.stringify(synced)}`);
  }
  return { app, inngest, endpoint: `${app.url}/api/inngest`, port: Number(new URL(app.url).port) };
}

/** A tenant with one subscription to offering.created at `url`. */
export async function subscribedTenant(url: string) {
  const { tenantId, key } = await tenantWithKey();
  const subscription = await dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["offering.created"] as never });
  return { tenantId, key, subscriptionId: subscription.id };
}

export async function createOffering(key: string) {
  const res = await call("POST", "/offerings", { key, body: { title: "A", price: 1, price_currency: "USD" } });
  if (res.status !== 201) throw new Error(`POST /offerings: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * A tenant's deliveries as both engines must leave them: each delivery's state, its attempt log
 * (without ids and times), and the tenant's alerts. `engine` of an attempt is left out: it is what differs.
 */
export async function deliveryState(tenantId: string) {
  const db = await getDb();
  const deliveries = await db.webhookDelivery.findMany({ where: { tenantId }, orderBy: { createdAt: "asc" } });
  const attempts = await db.webhookAttempt.findMany({ where: { tenantId }, orderBy: [{ cycle: "asc" }, { attemptNumber: "asc" }] });
  const notifications = await db.notification.findMany({ where: { tenantId }, orderBy: { createdAt: "asc" } });
  return {
    deliveries: deliveries.map((d) => ({
      status: d.status,
      cycle: d.cycle,
      attempt_count: d.attemptCount,
      last_status_code: d.lastStatusCode,
      response_body: d.responseBody,
      delivered: d.deliveredAt !== null,
    })),
    attempts: attempts.map((a) => ({
      cycle: a.cycle,
      attempt_number: a.attemptNumber,
      outcome: a.outcome,
      status_code: a.statusCode,
      throttled: a.throttled,
      error: a.error,
      response_body: a.responseBody,
    })),
    alerts: notifications.map((n) => ({ kind: n.kind, title: n.title })),
  };
}

const TERMINAL = ["delivered", "permanent_fail", "dead_letter"];

/** Waits until every delivery of the tenant is delivered, failed for good or dead-lettered. */
export async function settledDeliveries(tenantId: string, count = 1, timeoutMs = 30_000) {
  const db = await getDb();
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.webhookDelivery.findMany({ where: { tenantId } });
    if (rows.length >= count && rows.every((r) => TERMINAL.includes(r.status))) return rows;
    if (Date.now() > until) throw new Error(`deliveries not settled: ${JSON.stringify(rows.map((r) => [r.status, r.attemptCount]))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The harness's runs in short (status, output, each call's step, attempt, status and ops), for a failing test's log. */
export function runsReport(inngest: InngestServer): string {
  const runs = inngest.runs.map((r) => ({
    status: r.status,
    output: r.output,
    error: r.error,
    calls: r.calls.map((c) => [c.stepId.slice(0, 8), c.attempt, c.status ?? c.networkError, c.ops?.map((o) => `${o.op} ${o.displayName ?? ""}`)]),
  }));
  return JSON.stringify({ runs, violations: inngest.violations }, null, 1).slice(0, 20_000);
}
