// The Inngest engine, in-process with @inngest/test against a real consumer on 127.0.0.1: the
// dispatcher hands each (delivery, cycle) to Inngest as one event, the function runs the ladder
// (step.run per attempt, step.sleep between), and a rerun of the same event starts a new cycle.
// A fresh engine per run, and every sleep step mocked (the test engine cannot wait).
import { afterAll, describe, expect, it } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { call, tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";
import { inngestConfigured } from "../../server/webhooks/engine";
import { createInngestDispatcher, deliverWebhook, type DeliveryRequested } from "../../server/webhooks/inngest-engine";
import { openDatabase } from "../../server/db/database";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
delete process.env.WEBHOOK_RETRY_DELAYS_MS; // the specification's ladder: the sleeps are mocked
// The ladder alone: a whole ladder of failures would open the endpoint's breaker (its waits are steps this test does not mock).
process.env.WEBHOOK_BREAKER_FAILURES = "1000";

const consumers: Consumer[] = [];
afterAll(async () => {
  for (const c of consumers) await c.close();
});

/** Emits one offering.created to a new subscription and dispatches it (capturing the event sent). */
async function dispatchedDelivery(answer: Parameters<typeof startConsumer>[0]) {
  const { tenantId, key } = await tenantWithKey();
  const c = await startConsumer(answer);
  consumers.push(c);
  await dashboardCaller(tenantId).webhooks.createSubscription({ url: c.url(), events: ["offering.created"] });
  await call("POST", "/offerings", { key, body: { title: "A", price: 1, price_currency: "USD" } });
  const sent: DeliveryRequested[] = [];
  const dispatcher = createInngestDispatcher(async (events) => void sent.push(...events));
  await dispatcher.start();
  await eventually(async () => sent.length === 1);
  await dispatcher.stop();
  const [delivery] = await deliveriesOf(tenantId);
  const row = await (await openDatabase()).prisma.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
  expect(row.inngestRunId).toBe("dispatched");
  return { tenantId, c, event: sent[0], deliveryId: delivery.id };
}

const run = (event: DeliveryRequested) =>
  new InngestTestEngine({
    function: deliverWebhook,
    events: [event as never],
    steps: [2, 3, 4, 5, 6].map((n) => ({ id: `backoff-${n}`, handler() {} })),
  }).execute();

describe("Inngest engine", () => {
  it("is off without Inngest configuration", () => {
    expect(inngestConfigured({})).toBe(false);
    expect(inngestConfigured({ INNGEST_DEV: "1" })).toBe(true);
    expect(inngestConfigured({ INNGEST_EVENT_KEY: "k" })).toBe(true);
  });

  it("runs the ladder to dead-letter with the specification's sleeps, and a rerun is a new recorded cycle", async () => {
    const { tenantId, c, event, deliveryId } = await dispatchedDelivery(503);
    expect(event).toMatchObject({
      name: "webhooks/delivery.requested",
      id: expect.stringMatching(new RegExp(`^${deliveryId}-1-\\d+$`)),
      data: { delivery_id: deliveryId, tenant_id: tenantId, subscription_id: expect.any(String), cycle: 1 },
    });

    const first = await run(event);
    expect(first.result).toMatchObject({ delivery_id: deliveryId, cycle: 1, status: "dead_letter", attempt: 6 });
    expect(first.ctx.step.sleep.mock.calls.map((args: unknown[]) => args.slice(0, 2))).toEqual([
      ["backoff-2", 60_000],
      ["backoff-3", 300_000],
      ["backoff-4", 1_800_000],
      ["backoff-5", 7_200_000],
      ["backoff-6", 43_200_000],
    ]);
    expect(c.received).toHaveLength(6);
    let [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "dead_letter", cycle: 1, attempt_count: 6, response_body: "answer 503" });
    expect(delivery.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [1, n, "retry"]));
    expect((await dashboardCaller(tenantId).webhooks.listNotifications({})).data).toHaveLength(1);

    // An operator reruns the same run from the Inngest console: a new cycle, earlier attempts untouched.
    c.setBehaviour(200);
    const rerun = await run(event);
    expect(rerun.result).toMatchObject({ cycle: 2, status: "delivered", attempt: 1 });
    [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "delivered", cycle: 2, attempt_count: 1 });
    expect(delivery.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome])).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((n) => [1, n, "retry"]),
      [2, 1, "delivered"],
    ]);
    expect(c.received).toHaveLength(7);
  }, 120_000);

  it("stops after one attempt on a 4xx, without sleeping", async () => {
    const { tenantId, c, event, deliveryId } = await dispatchedDelivery(400);
    const first = await run(event);
    expect(first.result).toMatchObject({ cycle: 1, status: "permanent_fail", attempt: 1 });
    expect(first.ctx.step.sleep).not.toHaveBeenCalled();
    expect(c.received).toHaveLength(1);
    const [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ id: deliveryId, status: "permanent_fail", attempt_count: 1, last_status_code: 400 });
  });
});
