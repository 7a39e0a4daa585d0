// One tenant's broken endpoint must not delay anyone else, against real consumers on 127.0.0.1:
// attempts in flight are capped per endpoint and per tenant (also across worker processes on one
// PostgreSQL), a failing endpoint's breaker opens after K failures in a row and then sends only
// spaced probes until one succeeds, deliveries held back keep their order and spend no attempt, and
// an endpoint failing for the auto-disable period is disabled, audited, shown, and resumes when
// enabled again. Counts and order are asserted, not latencies (the machine is shared and noisy).
import type { ChildProcess } from "node:child_process";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey, call } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { aClaimHasPassed, dashboardCaller, deliveriesOf, emitInOrder, killWorkerProcess, startWorkerProcess } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
// A failed delivery's next rung is a minute away: within a test, every later request is a new delivery or a probe.
process.env.WEBHOOK_RETRY_DELAYS_MS = "0,60000,60000,60000,60000,60000";

const FAIRNESS_SETTINGS = [
  "WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT",
  "WEBHOOK_MAX_IN_FLIGHT_PER_TENANT",
  "WEBHOOK_BREAKER_FAILURES",
  "WEBHOOK_BREAKER_PROBE_INTERVAL_MS",
  "WEBHOOK_AUTO_DISABLE_AFTER_SECONDS",
  "WEBHOOK_ATTEMPT_TIMEOUT_MS",
] as const;

let consumers: Consumer[] = [];
let children: ChildProcess[] = [];
async function consumer(...args: Parameters<typeof startConsumer>) {
  const c = await startConsumer(...args);
  consumers.push(c);
  return c;
}

// Consumers first: their hanging requests end, so the worker's attempts in flight end with them.
async function cleanUp() {
  for (const c of consumers) await c.close();
  consumers = [];
  for (const child of children) await killWorkerProcess(child);
  children = [];
  await stopEmbeddedWorker();
  for (const name of FAIRNESS_SETTINGS) delete process.env[name];
}
afterEach(cleanUp);
afterAll(cleanUp);

function configure(settings: Partial<Record<(typeof FAIRNESS_SETTINGS)[number], number>>) {
  for (const [name, value] of Object.entries(settings)) process.env[name] = String(value);
}

async function subscribe(tenantId: string, url: string) {
  return dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["csat.received"], max_deliveries_per_second: 1000 });
}

const idsOf = (c: Consumer) => c.received.map((r) => r.body.id as string);

/** A's two hanging endpoints and B's healthy one; B's deliveries must all arrive while A's hang. */
async function hangingTenantBesideAHealthyOne() {
  const a = await tenantWithKey();
  const b = await tenantWithKey();
  const hangingOne = await consumer("hang");
  const hangingTwo = await consumer("hang");
  const healthy = await consumer(200);
  await subscribe(a.tenantId, hangingOne.url());
  await subscribe(a.tenantId, hangingTwo.url());
  await subscribe(b.tenantId, healthy.url());
  await emitInOrder(a.tenantId, 30);
  return { a, b, hangingOne, hangingTwo, healthy };
}

describe("one endpoint's failures cost only that endpoint", () => {
  it("hanging_endpoints_hold_at_most_their_caps_while_another_tenants_deliveries_all_arrive_sent_in_order", async () => {
    // Without the caps A's hanging attempts would take all 5 of the worker's places for 30 s.
    configure({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 2, WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: 3, WEBHOOK_ATTEMPT_TIMEOUT_MS: 30_000 });
    const { b, hangingOne, hangingTwo, healthy } = await hangingTenantBesideAHealthyOne();
    await startEmbeddedWorker({ concurrency: 5, pollIntervalMs: 100 });
    await eventually(async () => hangingOne.received.length + hangingTwo.received.length === 3);
    const ids = await emitInOrder(b.tenantId, 20);
    await healthy.waitFor(20, 20_000);
    // Each of B's events once. Sent in order (below); with two requests open at once to B's
    // endpoint, two sends a slot apart may reach it in either order.
    expect(new Set(idsOf(healthy))).toEqual(new Set(ids));
    expect(healthy.received).toHaveLength(20);
    // No attempt of A ended (30 s timeout): A's requests are exactly what its caps let in.
    expect(hangingOne.received.length + hangingTwo.received.length).toBe(3);
    expect(hangingOne.open.most).toBeLessThanOrEqual(2);
    expect(hangingTwo.open.most).toBeLessThanOrEqual(2);
    expect(hangingOne.open.most + hangingTwo.open.most).toBe(3);
    const deliveries = await eventually(async () => ((list) => list.every((d) => d.status !== "pending") && list)(await deliveriesOf(b.tenantId)));
    expect(deliveries.filter((d) => d.status !== "delivered" || d.attempt_count !== 1)).toEqual([]);
    // Sent in the order the events were written: each attempt started no earlier than the one before.
    const startedAt = new Map(deliveries.map((d) => [d.event_id, Date.parse(d.attempts[0]!.created_at)]));
    const starts = ids.map((id) => startedAt.get(id)!);
    expect(starts.every((t, i) => i === 0 || t >= starts[i - 1]!)).toBe(true);
  }, 60_000);

  it.skipIf(!process.env.DATABASE_URL)(
    "caps_hold_across_worker_processes_on_one_postgresql",
    async () => {
      configure({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 2, WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: 3, WEBHOOK_ATTEMPT_TIMEOUT_MS: 30_000 });
      const { b, hangingOne, hangingTwo, healthy } = await hangingTenantBesideAHealthyOne();
      // Three processes with 5 places each: 15 places, yet A holds 3 in all.
      children.push(await startWorkerProcess(), await startWorkerProcess());
      await startEmbeddedWorker({ concurrency: 5, pollIntervalMs: 100 });
      await eventually(async () => hangingOne.received.length + hangingTwo.received.length === 3);
      const ids = await emitInOrder(b.tenantId, 20);
      await healthy.waitFor(20, 20_000);
      expect(new Set(idsOf(healthy))).toEqual(new Set(ids));
      expect(healthy.received).toHaveLength(20);
      expect(hangingOne.received.length + hangingTwo.received.length).toBe(3);
      expect(Math.max(hangingOne.open.most, hangingTwo.open.most)).toBeLessThanOrEqual(2);
    },
    60_000,
  );

  it("breaker_opens_after_k_failures_sends_only_spaced_probes_and_closes_on_a_probes_success_held_deliveries_in_order_unspent", async () => {
    const PROBE_MS = 700;
    configure({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 1, WEBHOOK_BREAKER_FAILURES: 3, WEBHOOK_BREAKER_PROBE_INTERVAL_MS: PROBE_MS });
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    let status = 500;
    const failedIds: string[] = [];
    const endpoint = await consumer((req) => {
      if (status === 500) failedIds.push(req.body.id);
      return status;
    });
    const sub = await subscribe(tenantId, endpoint.url());
    const ids = await emitInOrder(tenantId, 12);
    await startEmbeddedWorker({ pollIntervalMs: 50 });
    // Three failures in a row open the breaker; then two probes (the 4th and 5th deliveries), each failing.
    await endpoint.waitFor(5, 15_000);
    expect((await owner.webhooks.getSubscription({ id: sub.id })).circuit).toBe("open");
    const gaps = endpoint.received
      .slice(2, 5)
      .map((r, i, all) => (i ? r.at - all[i - 1].at : 0))
      .slice(1);
    // A probe goes no sooner than the probe interval after the failure before it.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(PROBE_MS - 100);
    // Held deliveries: untouched (no attempt spent), still pending.
    const held = (await deliveriesOf(tenantId)).filter((d) => d.attempt_count === 0);
    expect(held.length).toBeGreaterThanOrEqual(12 - 6);
    expect(held.every((d) => d.status === "pending" && d.attempts.length === 0)).toBe(true);
    status = 200;
    await endpoint.waitFor(12, 15_000);
    // Every event once (the failed ones wait a minute for their next rung), in creation order.
    expect(idsOf(endpoint)).toEqual(ids);
    const failed = failedIds.length;
    expect(failed).toBeGreaterThanOrEqual(5);
    expect(failedIds).toEqual(ids.slice(0, failed));
    // The probe that succeeded also waited its interval; after it, the rest went at once.
    expect(endpoint.received[failed].at - endpoint.received[failed - 1].at).toBeGreaterThanOrEqual(PROBE_MS - 100);
    const list = await eventually(async () => ((l) => l.filter((d) => d.status === "delivered").length === 12 - failed && l)(await deliveriesOf(tenantId)));
    const byEvent = new Map(list.map((d) => [d.event_id, d]));
    expect(ids.map((id) => [byEvent.get(id)!.status, byEvent.get(id)!.attempt_count])).toEqual(ids.map((_, i) => [i < failed ? "pending" : "delivered", 1]));
    const after = await owner.webhooks.getSubscription({ id: sub.id });
    expect(after).toMatchObject({ circuit: "closed", failing_since: null, enabled: true });
    expect(after.last_success_at).not.toBeNull();
  }, 60_000);

  it("endpoint_failing_for_the_period_is_disabled_audited_shown_and_re_enabling_resumes_where_it_stopped", async () => {
    configure({
      WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 1,
      WEBHOOK_BREAKER_FAILURES: 2,
      WEBHOOK_BREAKER_PROBE_INTERVAL_MS: 300,
      WEBHOOK_AUTO_DISABLE_AFTER_SECONDS: 2,
    });
    const { tenantId, key } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const failing = await consumer(503);
    const sub = await subscribe(tenantId, failing.url());
    await emitInOrder(tenantId, 30);
    await startEmbeddedWorker({ pollIntervalMs: 50 });
    const db = await getDb();
    await eventually(async () => !(await db.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } })).enabled, 20_000, 100);
    const disabled = await owner.webhooks.getSubscription({ id: sub.id });
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: "endpoint_failing", circuit: "open" });
    expect(Date.parse(disabled.disabled_at!) - Date.parse(disabled.failing_since!)).toBeGreaterThanOrEqual(2000);
    const sentBeforeDisable = failing.received.length;
    const audit = await db.auditLog.findMany({ where: { tenantId, action: "webhook_subscription.auto_disabled" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: "system", targetType: "webhook_subscription", targetId: sub.id });
    expect(audit[0].details).toMatchObject({ reason: "endpoint_failing", url: failing.url(), disabled_after_seconds: 2, last_success_at: null });
    const notices = await owner.webhooks.listNotifications({});
    expect(notices.data.filter((n) => n.kind === "webhook.disabled")).toHaveLength(1);
    // Events while disabled are kept for it (held, not sent) and listed by the events API.
    const whileDisabled = await emitInOrder(tenantId, 3);
    const listed = await call("GET", "/events?limit=100", { key });
    expect(listed.status).toBe(200);
    const listedIds = (listed.body as { data: { id: string }[] }).data.map((e) => e.id);
    for (const id of whileDisabled) expect(listedIds).toContain(id);
    // Once a later claim has run, one that ignored the disabling would have leased these (and sent them).
    await aClaimHasPassed(await consumer(200));
    expect(failing.received.length).toBe(sentBeforeDisable);
    const heldRows = await db.webhookDelivery.findMany({ where: { eventId: { in: whileDisabled.map((id) => id.slice("evt_".length)) } } });
    expect(heldRows.map((d) => [d.status, d.attemptCount, d.lockedUntil])).toEqual(whileDisabled.map(() => ["pending", 0, null]));
    const waiting = (await deliveriesOf(tenantId)).filter((d) => d.status === "pending" && d.attempt_count === 0);
    expect(waiting.length).toBe(30 + 3 - sentBeforeDisable);
    // Re-enabled: breaker closed, streak forgotten, and the waiting deliveries go in creation order.
    failing.setBehaviour(200);
    const enabled = await owner.webhooks.updateSubscription({ id: sub.id, enabled: true });
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, circuit: "closed", failing_since: null });
    await failing.waitFor(33, 20_000);
    const order = [...waiting].sort((x, y) => Date.parse(x.created_at) - Date.parse(y.created_at)).map((d) => d.event_id);
    expect(idsOf(failing).slice(sentBeforeDisable)).toEqual(order);
    const reenabled = await db.auditLog.findMany({ where: { tenantId, action: "webhook_subscription.changed" } });
    expect(reenabled.map((a) => a.details)).toEqual([{ changed: { enabled: { from: false, to: true } } }]);
  }, 60_000);
});
