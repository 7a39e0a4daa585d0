// The endpoint page's procedures against a real consumer on 127.0.0.1 and the embedded worker:
// each attempt's request and response, the delivery states and their filters, resending in any
// state, the pending count the delete dialog shows, roles, and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { getDelivery, listDeliveries } from "../../server/webhooks/webhooks.service";
import { toAppError } from "../../server/lib/errors";
import { newTenant } from "../helpers/api";
import { dashboardCaller as callerOf } from "../helpers/webhooks";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";

// A failed first attempt waits 8 s (long enough to be seen as `retrying`); the rest of the ladder is immediate.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
process.env.WEBHOOK_RETRY_DELAYS_MS = "0,8000,0,0,0,0";
process.env.WEBHOOK_ATTEMPT_TIMEOUT_MS = "1500";
// The ladder alone: a whole ladder of failures would open the endpoint's breaker (endpoint_fairness.test.ts).
process.env.WEBHOOK_BREAKER_FAILURES = "1000";

const consumers: Consumer[] = [];
async function consumer(...args: Parameters<typeof startConsumer>) {
  const c = await startConsumer(...args);
  consumers.push(c);
  return c;
}

beforeAll(async () => {
  await openDatabase();
  await startEmbeddedWorker({ pollIntervalMs: 100 });
});
afterAll(async () => {
  await stopEmbeddedWorker();
  for (const c of consumers) await c.close();
});

// A user per tenant and role: the per-user rate limit of the dashboard is kept in Redis across runs.
const dashboardCaller = (tenantId: string, role: "owner" | "admin" | "member" = "owner") => callerOf(tenantId, role, `user-${role}-${tenantId}`);

async function endpoint(url: string, events: string[] = ["lead.created", "booking.created"]) {
  const { id: tenantId } = await newTenant();
  const owner = dashboardCaller(tenantId);
  const sub = await owner.webhooks.createSubscription({ url, events: events as never });
  return { tenantId, owner, sub };
}

// Polling goes to the service directly: the procedures' per-user rate limit is not what is tested here.
const deliveryOf = async (tenantId: string, id: string) => getDelivery(scopeToTenant((await openDatabase()).prisma, tenantId), id);
const deliveriesIn = async (tenantId: string, filter: Parameters<typeof listDeliveries>[1]) =>
  (await listDeliveries(scopeToTenant((await openDatabase()).prisma, tenantId), filter)).data;

describe("endpoint page: deliveries and attempts", () => {
  it("each_attempt_keeps_the_request_headers_and_body_sent_and_the_response_code_body_and_duration", async () => {
    const c = await consumer(200);
    const { tenantId, owner, sub } = await endpoint(c.url("/ok"));
    const test = await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    expect(test).toMatchObject({ event_type: "webhook.test", state: "pending", status: "pending", attempts: [] });

    const done = await eventually(async () => {
      const d = await deliveryOf(tenantId, test.id);
      return d.state === "delivered" ? d : null;
    });
    const [got] = c.received;
    const [attempt] = done.attempts;
    expect(attempt).toMatchObject({ cycle: 1, attempt_number: 1, outcome: "delivered", status_code: 200, response_body: "answer 200", error: null });
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    expect(attempt.request_body).toBe(got.raw.toString("utf8"));
    expect(JSON.parse(attempt.request_body!)).toMatchObject({ id: done.event_id, event: "webhook.test" });
    const sentHeaders = attempt.request_headers!;
    expect(Object.keys(sentHeaders).sort()).toEqual([
      "content-type",
      "user-agent",
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
      "x-delivery-id",
      "x-event-type",
      "x-webhook-signature",
    ]);
    for (const [name, value] of Object.entries(sentHeaders)) expect(got.headers[name]).toBe(value);
    expect(sentHeaders["x-delivery-id"]).toBe(attempt.id);
    expect(JSON.stringify(done)).not.toContain(sub.secret);
  });

  it("a_failed_attempt_reads_retrying_with_its_code_and_next_attempt_then_dead_lettered_and_filters_by_state_and_event_type", async () => {
    const c = await consumer(503);
    const { tenantId, owner, sub } = await endpoint(c.url("/down"));
    await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    const member = dashboardCaller(tenantId, "member");

    const retrying = await eventually(async () => (await deliveriesIn(tenantId, { subscription_id: sub.id, state: "retrying" }))[0]);
    expect(retrying).toMatchObject({ status: "pending", state: "retrying", attempt_count: 1, last_status_code: 503, event_type: "webhook.test" });
    expect(retrying.event_id).toMatch(/^evt_[0-9a-f-]{36}$/);
    const wait = Date.parse(retrying.next_attempt_at!) - Date.parse(retrying.attempts[0].created_at);
    expect(wait).toBeGreaterThanOrEqual(8000);
    expect((await member.webhooks.listDeliveries({ subscription_id: sub.id, state: "delivered" })).data).toEqual([]);
    expect((await member.webhooks.listDeliveries({ subscription_id: sub.id, event_type: "lead.created" })).data).toEqual([]);
    expect((await member.webhooks.listDeliveries({ subscription_id: sub.id, event_type: "webhook.test" })).data.map((d) => d.id)).toEqual([retrying.id]);

    const dead = await eventually(async () => (await deliveriesIn(tenantId, { subscription_id: sub.id, state: "dead_lettered" }))[0], 20_000);
    expect(dead).toMatchObject({
      id: retrying.id,
      status: "dead_letter",
      state: "dead_lettered",
      attempt_count: 6,
      next_attempt_at: null,
      last_status_code: 503,
    });
    expect((await member.webhooks.listDeliveries({ subscription_id: sub.id, state: "retrying" })).data).toEqual([]);

    const gone = await consumer(410);
    const failedSub = await dashboardCaller(tenantId).webhooks.createSubscription({ url: gone.url("/gone"), events: ["lead.created"] });
    const test = await dashboardCaller(tenantId).webhooks.sendTestEvent({ subscription_id: failedSub.id });
    const failed = await eventually(async () => (await deliveriesIn(tenantId, { state: "failed" }))[0]);
    expect(failed).toMatchObject({ id: test.id, status: "permanent_fail", state: "failed", attempt_count: 1, last_status_code: 410 });
  }, 40_000);

  it("resend_works_in_any_state_as_a_new_cycle_keeping_earlier_attempts_and_is_audited", async () => {
    const c = await consumer(200);
    const { tenantId, owner, sub } = await endpoint(c.url("/ok"));
    const test = await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    await eventually(async () => (await deliveryOf(tenantId, test.id)).state === "delivered");

    const resent = await dashboardCaller(tenantId, "admin").webhooks.replayDelivery({ id: test.id });
    expect(resent).toMatchObject({ state: "pending", cycle: 2, attempt_count: 0 });
    expect(resent.attempts.map((a) => [a.cycle, a.attempt_number])).toEqual([[1, 1]]);
    const again = await eventually(async () => {
      const d = await deliveryOf(tenantId, test.id);
      return d.state === "delivered" && d.cycle === 2 ? d : null;
    });
    expect(again.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome])).toEqual([
      [1, 1, "delivered"],
      [2, 1, "delivered"],
    ]);
    expect(c.received).toHaveLength(2);
    expect(c.received[1].body.id).toBe(c.received[0].body.id);

    const audit = await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "delivery.replayed" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorId: `user-admin-${tenantId}`, targetType: "webhook_delivery", targetId: test.id });
    expect(audit[0].details).toEqual({ subscription_id: sub.id, event_id: again.event_id, cycle: 2, previous_state: "delivered" });
  });

  it("resending_while_an_attempt_is_in_flight_is_a_409", async () => {
    const c = await consumer("hang");
    const { tenantId, owner, sub } = await endpoint(c.url("/slow"));
    const test = await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    await c.waitFor(1);
    const error = toAppError(await owner.webhooks.replayDelivery({ id: test.id }).catch((e) => e));
    expect(error.errorCode).toBe("conflict");
    expect(error.message).toBe("an attempt of this delivery is in flight; resend it once that attempt is recorded");
    expect(await (await openDatabase()).prisma.auditLog.count({ where: { tenantId, action: "delivery.replayed" } })).toBe(0);
  });
});

describe("endpoint page: the subscription, deleting, roles and tenants", () => {
  it("get_subscription_counts_pending_deliveries_and_delete_reports_and_audits_the_ones_dropped", async () => {
    const c = await consumer(503);
    const { tenantId, owner, sub } = await endpoint(c.url("/down"));
    expect(await owner.webhooks.getSubscription({ id: sub.id })).toMatchObject({ id: sub.id, url: sub.url, pending_deliveries: 0 });
    await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    await c.waitFor(2);
    const member = dashboardCaller(tenantId, "member");
    expect((await member.webhooks.getSubscription({ id: sub.id })).pending_deliveries).toBe(2);

    expect(await owner.webhooks.deleteSubscription({ id: sub.id })).toEqual({ id: sub.id, deleted: true, dropped_pending_deliveries: 2 });
    const [entry] = await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "webhook_subscription.deleted" } });
    expect(entry.details).toEqual({ url: sub.url, events: ["lead.created", "booking.created"], dropped_pending_deliveries: 2 });
    await expect(owner.webhooks.getSubscription({ id: sub.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("members_read_the_endpoint_page_but_get_403_on_resend_test_event_update_and_delete", async () => {
    const c = await consumer(200);
    const { tenantId, owner, sub } = await endpoint(c.url("/ok"));
    const test = await owner.webhooks.sendTestEvent({ subscription_id: sub.id });
    await eventually(async () => (await deliveryOf(tenantId, test.id)).state === "delivered");
    const member = dashboardCaller(tenantId, "member");
    expect((await member.webhooks.getSubscription({ id: sub.id })).id).toBe(sub.id);
    expect((await member.webhooks.listDeliveries({ subscription_id: sub.id })).data).toHaveLength(1);
    for (const attempt of [
      () => member.webhooks.replayDelivery({ id: test.id }),
      () => member.webhooks.sendTestEvent({ subscription_id: sub.id }),
      () => member.webhooks.updateSubscription({ id: sub.id, description: "mine now" }),
      () => member.webhooks.deleteSubscription({ id: sub.id }),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: "FORBIDDEN", message: "role 'member' cannot make changes; an owner or admin can" });
    }
    expect(c.received).toHaveLength(1);
    const admin = dashboardCaller(tenantId, "admin");
    expect(await admin.webhooks.updateSubscription({ id: sub.id, description: "orders", url: c.url("/v2"), events: ["booking.created"] })).toMatchObject({
      description: "orders",
      url: c.url("/v2"),
      events: ["booking.created"],
    });
  });

  it("another_tenants_subscription_and_delivery_ids_are_404_and_never_listed", async () => {
    const c = await consumer(200);
    const a = await endpoint(c.url("/a"));
    const test = await a.owner.webhooks.sendTestEvent({ subscription_id: a.sub.id });
    await eventually(async () => (await deliveryOf(a.tenantId, test.id)).state === "delivered");
    const { id: otherTenant } = await newTenant();
    const other = dashboardCaller(otherTenant);
    for (const attempt of [
      () => other.webhooks.getSubscription({ id: a.sub.id }),
      () => other.webhooks.getDelivery({ id: test.id }),
      () => other.webhooks.replayDelivery({ id: test.id }),
      () => other.webhooks.sendTestEvent({ subscription_id: a.sub.id }),
      () => other.webhooks.updateSubscription({ id: a.sub.id, enabled: false }),
      () => other.webhooks.deleteSubscription({ id: a.sub.id }),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    expect((await other.webhooks.listDeliveries({ subscription_id: a.sub.id })).data).toEqual([]);
    expect((await a.owner.webhooks.getSubscription({ id: a.sub.id })).enabled).toBe(true);
    expect(c.received).toHaveLength(1);
  });

  it("an_unknown_state_or_event_type_filter_is_a_400_naming_the_field", async () => {
    const { id: tenantId } = await newTenant();
    const member = dashboardCaller(tenantId, "member");
    const badState = toAppError(await member.webhooks.listDeliveries({ state: "stuck" as never }).catch((e) => e));
    expect(badState.errorCode).toBe("bad_request");
    expect(badState.message).toBe("invalid field 'state': must be one of: pending, retrying, delivered, failed, dead_lettered");
    const badType = toAppError(await member.webhooks.listDeliveries({ event_type: "lead.exploded" as never }).catch((e) => e));
    expect(badType.errorCode).toBe("bad_request");
    expect(badType.message).toMatch(/^invalid field 'event_type': must be one of: /);
  });
});
