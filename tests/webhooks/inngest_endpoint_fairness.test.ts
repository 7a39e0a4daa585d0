// Endpoint fairness on the Inngest engine, in-process with @inngest/test against real consumers on
// 127.0.0.1: the delivery function's concurrency is keyed per subscription and per tenant; a run
// whose endpoint's breaker is open sleeps (durably) until the probe without spending a rung and, held
// too long, hands its delivery back to the dispatcher (re-dispatched under a new event id, resuming
// with its attempts); a due probe is sent and a success closes the breaker; a disabled subscription's
// run sends nothing and hands back at once.
import { afterAll, describe, expect, it } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { createInngestDispatcher, deliverWebhook, MAX_HELD_SLEEPS, type DeliveryRequested } from "../../server/webhooks/inngest-engine";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
delete process.env.WEBHOOK_RETRY_DELAYS_MS; // the specification's ladder: the sleeps are mocked

const consumers: Consumer[] = [];
afterAll(async () => {
  for (const c of consumers) await c.close();
});

/** One event to a new subscription answering `status`, dispatched: the event sent and the ids. */
async function dispatchedOne(status: number) {
  const { tenantId } = await tenantWithKey();
  const c = await startConsumer(status);
  consumers.push(c);
  const sub = await dashboardCaller(tenantId).webhooks.createSubscription({ url: c.url(), events: ["csat.received"] });
  await scopeToTenant((await openDatabase()).prisma, tenantId).$transaction((tx) =>
    emitEvent(tx, "csat.received", {
      object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 4, comment: null, created_at: new Date().toISOString() },
    }),
  );
  return { tenantId, c, subscriptionId: sub.id, event: await dispatchOnce() };
}

async function dispatchOnce(): Promise<DeliveryRequested> {
  const sent: DeliveryRequested[] = [];
  const dispatcher = createInngestDispatcher(async (events) => void sent.push(...events));
  await dispatcher.start();
  await eventually(async () => sent.length === 1);
  await dispatcher.stop();
  return sent[0];
}

/** Every held sleep of attempt 1 mocked (the test engine cannot wait). */
const heldSleeps = () => Array.from({ length: MAX_HELD_SLEEPS }, (_, i) => ({ id: i === 0 ? "slot-1" : `slot-1-${i + 1}`, handler() {} }));
const run = (event: DeliveryRequested) => new InngestTestEngine({ function: deliverWebhook, events: [event as never], steps: heldSleeps() }).execute();

const setBreaker = async (subscriptionId: string, probeAt: Date | null, enabled = true) =>
  (await openDatabase()).prisma.webhookSubscription.update({
    where: { id: subscriptionId },
    data: { breakerProbeAt: probeAt, consecutiveFailures: probeAt ? 5 : 0, enabled },
  });

describe("Inngest engine: one endpoint's failures cost only that endpoint", () => {
  it("concurrency_is_keyed_per_subscription_and_per_tenant_with_the_settings_limits", () => {
    expect(deliverWebhook.opts.concurrency).toEqual([
      { key: "event.data.subscription_id", limit: 8 },
      { key: "event.data.tenant_id", limit: 24 },
    ]);
  });

  it("an_open_breaker_holds_the_run_without_spending_a_rung_then_hands_the_delivery_back_resumed_by_a_new_dispatch", async () => {
    const { tenantId, c, subscriptionId, event } = await dispatchedOne(200);
    expect(event.data.subscription_id).toBe(subscriptionId);
    const probeAt = new Date(Date.now() + 3_600_000);
    await setBreaker(subscriptionId, probeAt);
    const held = await run(event);
    expect(held.result).toMatchObject({ status: "held" });
    const slept = held.ctx.step.sleep.mock.calls as unknown as [string, number][];
    expect(slept).toHaveLength(MAX_HELD_SLEEPS);
    expect(slept[0][1]).toBeGreaterThan(3_500_000);
    expect(c.received).toHaveLength(0);
    let [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "pending", attempt_count: 0, attempts: [] });
    const row = await (await openDatabase()).prisma.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
    expect(row.inngestRunId).toBeNull();
    expect(Math.abs(row.nextAttemptAt!.getTime() - probeAt.getTime())).toBeLessThan(5_000);

    // The probe is due: the dispatcher sends the delivery again (a new event id), and the probe's success closes the breaker.
    await setBreaker(subscriptionId, new Date(Date.now() - 1000));
    await (await openDatabase()).prisma.webhookDelivery.update({ where: { id: delivery.id }, data: { nextAttemptAt: new Date() } });
    const again = await dispatchOnce();
    expect(again.id).not.toBe(event.id);
    const probed = await run(again);
    expect(probed.result).toMatchObject({ status: "delivered", attempt: 1 });
    expect(c.received).toHaveLength(1);
    [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 1 });
    expect(await dashboardCaller(tenantId).webhooks.getSubscription({ id: subscriptionId })).toMatchObject({ circuit: "closed", failing_since: null });
  }, 60_000);

  it("a_disabled_subscriptions_run_sends_nothing_and_hands_back_at_once", async () => {
    const { tenantId, c, subscriptionId, event } = await dispatchedOne(200);
    await setBreaker(subscriptionId, null, false);
    const held = await run(event);
    expect(held.result).toMatchObject({ status: "held" });
    expect(held.ctx.step.sleep).not.toHaveBeenCalled();
    expect(c.received).toHaveLength(0);
    const [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "pending", attempt_count: 0 });
    expect((await (await openDatabase()).prisma.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).inngestRunId).toBeNull();
  }, 60_000);
});
