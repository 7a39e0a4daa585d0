// Outbound rate limits in the Inngest engine, in-process with @inngest/test against real consumers
// on 127.0.0.1: each attempt takes a send slot of its subscription (the same row the embedded
// workers use), waits for a near one inside its step and sleeps durably for a far one; a 429 with
// Retry-After is retried after that time without spending a rung.
import { afterAll, describe, expect, it } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { createInngestDispatcher, deliverWebhook, IN_STEP_SLOT_WAIT_MS, type DeliveryRequested } from "../../server/webhooks/inngest-engine";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, startCountingConsumerProcess, eventually } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
delete process.env.WEBHOOK_RETRY_DELAYS_MS; // the specification's ladder: the sleeps are mocked

const consumers: { close(): unknown }[] = [];
afterAll(async () => {
  for (const c of consumers) await c.close();
});

/** `count` events to a new subscription (at `rate` a second) dispatched to Inngest: the events sent. */
async function dispatched<C extends { url(): string; close(): unknown }>(c: C, count: number, rate?: number) {
  const { tenantId } = await tenantWithKey();
  consumers.push(c);
  await dashboardCaller(tenantId).webhooks.createSubscription({
    url: c.url(),
    events: ["csat.received"],
    ...(rate === undefined ? {} : { max_deliveries_per_second: rate }),
  });
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  for (let i = 0; i < count; i++) {
    await db.$transaction((tx) =>
      emitEvent(tx, "csat.received", {
        object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 4, comment: null, created_at: new Date().toISOString() },
      }),
    );
  }
  const sent: DeliveryRequested[] = [];
  const dispatcher = createInngestDispatcher(async (events) => void sent.push(...events));
  await dispatcher.start();
  await eventually(async () => sent.length === count);
  await dispatcher.stop();
  return { tenantId, c, events: sent };
}

// A fresh engine and fresh mocks per run (the engine keeps state on the mocks it is given).
const sleepsMocked = () => ["backoff-2", "backoff-3", "slot-1", "slot-2"].map((id) => ({ id, handler() {} }));
const run = (event: DeliveryRequested) => new InngestTestEngine({ function: deliverWebhook, events: [event as never], steps: sleepsMocked() }).execute();
const sleepsOf = (r: Awaited<ReturnType<typeof run>>) => r.ctx.step.sleep.mock.calls.map((args: unknown[]) => [args[0], args[1]]);

describe("Inngest engine: outbound rate limits", () => {
  it("a 429 with Retry-After is retried after that time, and the rung is not spent", async () => {
    const consumer = await startConsumer((_req, index) => (index === 0 ? { status: 429, headers: { "retry-after": "1" } } : 200));
    const { tenantId, c, events } = await dispatched(consumer, 1);
    const result = await run(events[0]);
    expect(result.result).toMatchObject({ status: "delivered", attempt: 2 });
    // The ladder's backoff is the Retry-After (the mocked sleep), and the subscription's paused slot
    // made the second attempt wait for it for real.
    expect(sleepsOf(result)).toEqual([["backoff-2", 1000]]);
    expect(c.received).toHaveLength(2);
    expect(c.received[1].at - c.received[0].at).toBeGreaterThanOrEqual(1000);
    const [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 2 });
    expect(delivery.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code])).toEqual([
      [1, "retry", 429],
      [2, "delivered", 200],
    ]);
    const rows = await (await openDatabase()).prisma.webhookAttempt.findMany({ where: { deliveryId: delivery.id }, orderBy: { attemptNumber: "asc" } });
    expect(rows.map((r) => r.throttled)).toEqual([true, false]);
  }, 60_000);

  it("concurrent runs of one subscription send at most its rate: near slots waited in the step, a far one slept durably", async () => {
    const { c, events } = await dispatched(await startCountingConsumerProcess(), 4, 2);
    const results = await Promise.all(events.map(run));
    expect(results.map((r) => r.result)).toEqual(events.map(() => expect.objectContaining({ status: "delivered", attempt: 1 })));
    // Slots 0, 550, 1100 and 1650 ms away (1.1/rate apart): the last is beyond IN_STEP_SLOT_WAIT_MS,
    // a durable sleep, and so is the third unless its run reserved it a moment late (PGlite runs one
    // query at a time).
    const slept = results.map(sleepsOf).filter((s) => s.length);
    expect(slept.length).toBeGreaterThanOrEqual(1);
    expect(slept.length).toBeLessThanOrEqual(2);
    for (const s of slept) {
      expect(s[0][0]).toBe("slot-1");
      expect(s[0][1]).toBeGreaterThan(IN_STEP_SLOT_WAIT_MS);
      expect(s[0][1]).toBeLessThanOrEqual(1650);
    }
    // Those that waited in their steps arrived 1.1/rate apart (the mocked sleep did not wait).
    const db = (await openDatabase()).prisma;
    const sleepers = new Set<string>();
    for (const [i, r] of results.entries()) {
      if (!sleepsOf(r).length) continue;
      const id = events[i].data.delivery_id;
      sleepers.add(`evt_${(await db.webhookDelivery.findUniqueOrThrow({ where: { id } })).eventId}`);
    }
    const paced = (await c.waitFor(4)).filter((r) => !sleepers.has(r.id)).map((r) => r.at);
    expect(paced).toHaveLength(4 - slept.length);
    // (200 ms of it allowed for scheduling jitter: a run at most 40 ms late keeps its slot, and PGlite
    // holds this process's event loop while it runs a query; unpaced, they would arrive together.)
    for (let i = 1; i < paced.length; i++) expect(paced[i] - paced[i - 1]).toBeGreaterThanOrEqual(550 - 200);
  }, 60_000);
});
