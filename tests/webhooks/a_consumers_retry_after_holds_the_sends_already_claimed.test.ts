// A consumer's 429 with Retry-After holds its whole subscription, the sends already claimed (or
// already given a send slot) included: on the embedded worker, on several worker processes sharing
// PostgreSQL, and on the Inngest engine, the consumer receives nothing from its 429 until the time
// it asked for has passed; then every delivery arrives, and the held ones spent no attempt.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { createInngestDispatcher, deliverWebhook, type DeliveryRequested } from "../../server/webhooks/inngest-engine";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, startWorkerProcess, stopWorkerProcess } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
// The second rung waits 4 s, so the 2 s asked for is the hold (a retry from the ladder would come later).
process.env.WEBHOOK_RETRY_DELAYS_MS = "0,4000,4000,4000,4000,4000";
process.env.WEBHOOK_BREAKER_FAILURES = "1000";

/** What the consumer's 429 asks for (Retry-After, seconds). */
const HOLD_MS = 2_000;
/** Send slots 55 ms apart: one claim takes five of them (PACE_HORIZON_MS), all due before the hold would end. */
const RATE = 20;

const consumers: Consumer[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const c of consumers) await c.close();
});

/** A consumer answering its first request 429 with Retry-After (after `delayMs`), then 200. */
async function throttlingOnce(delayMs = 0) {
  const c = await startConsumer((_req, index) => (index === 0 ? { status: 429, headers: { "retry-after": String(HOLD_MS / 1000) }, delayMs } : 200));
  consumers.push(c);
  return c;
}

/** A tenant subscribed at RATE to `url`, and `events` events written in one transaction (due together): their envelope ids. */
async function subscribedWithBacklog(url: string, events = 6) {
  const { tenantId } = await tenantWithKey();
  await dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["csat.received"], max_deliveries_per_second: RATE });
  const db = scopeToTenant(await getDb(), tenantId);
  const ids = await db.$transaction(async (tx) => {
    const out: string[] = [];
    for (let i = 0; i < events; i++) {
      const { eventId } = await emitEvent(tx, "csat.received", {
        object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 5, comment: `#${i}`, created_at: new Date().toISOString() },
      });
      out.push(`evt_${eventId}`);
    }
    return out;
  });
  return { tenantId, ids };
}

/**
 * Nothing was sent while the subscription was held, from the 429's record (the row's `held_until`
 * less the 2 s asked for; the process that sent it holds from the answer, before that) until the
 * hold's end; then every delivery arrived once, and only the throttled one made a second attempt (as
 * the deliveries API shows them). Each arrival is matched with its attempt, whose start the sender
 * stamps right after its hold check, just before the request: a stalled process (PGlite runs in this
 * one) may deliver a request checked before the hold later, and another process learns of the hold
 * once the record commits (`slackMs`). Without a hold on the row (the code before it), the window
 * is from the 429's answer.
 */
async function expectHeldThenDelivered(c: Consumer, tenantId: string, ids: string[], { answerDelayMs = 0, slackMs = 0 } = {}) {
  await c.waitFor(ids.length + 1, 20_000);
  const throttled = c.received[0];
  const answeredAt = throttled.at + answerDelayMs;
  const sub = await (await getDb()).webhookSubscription.findFirstOrThrow({ where: { tenantId } });
  const heldUntil = sub.heldUntil?.getTime() ?? answeredAt + HOLD_MS;
  const heldFrom = heldUntil - HOLD_MS;
  expect(heldFrom).toBeGreaterThanOrEqual(answeredAt);
  const deliveries = await eventually(async () => {
    const list = await deliveriesOf(tenantId);
    return list.length === ids.length && list.every((d) => d.status === "delivered") ? list : null;
  }, 20_000);
  // The n-th arrival of an event is its n-th attempt.
  const startedAt = new Map(
    deliveries.map((d) => [d.event_id, [...d.attempts].sort((a, b) => a.attempt_number - b.attempt_number).map((a) => Date.parse(a.created_at))]),
  );
  const seen = new Map<string, number>();
  const arrivals = c.received.map((r) => {
    const n = seen.get(r.body.id) ?? 0;
    seen.set(r.body.id, n + 1);
    return { at: r.at, started: startedAt.get(r.body.id)?.[n] ?? Number.NaN };
  });
  const during = arrivals.slice(1).filter((r) => !(r.started < heldFrom + slackMs || r.started >= heldUntil));
  expect(
    during.map((r) => `sent ${r.started - heldFrom} ms and arrived ${r.at - heldFrom} ms after the hold began, ${heldUntil - r.at} ms before it ended`),
  ).toEqual([]);
  // The consumer's view: after the 429, nothing but requests sent before the hold until its end.
  expect(arrivals.slice(1).filter((r) => r.at >= answeredAt && r.at < heldUntil && r.started >= heldFrom + slackMs)).toEqual([]);
  expect(
    c.received
      .slice(1)
      .map((r) => r.body.id)
      .sort(),
  ).toEqual([...ids].sort());
  const attempts = Object.fromEntries(deliveries.map((d) => [d.event_id, d.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code])]));
  expect(attempts).toEqual(
    Object.fromEntries(
      ids.map((id) => [
        id,
        id === throttled.body.id
          ? [
              [1, "retry", 429],
              [2, "delivered", 200],
            ]
          : [[1, "delivered", 200]],
      ]),
    ),
  );
  expect(deliveries.map((d) => d.attempt_count).sort()).toEqual([...ids.slice(1).map(() => 1), 2]);
  // Nothing more arrived (no held delivery was sent twice).
  expect(c.received).toHaveLength(ids.length + 1);
}

describe("embedded worker", () => {
  beforeAll(async () => {
    await startEmbeddedWorker({ pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await stopEmbeddedWorker();
  });

  it("a 429 with Retry-After holds the sends its worker had already claimed, without spending their attempts", async () => {
    const c = await throttlingOnce();
    const { tenantId, ids } = await subscribedWithBacklog(c.url());
    await expectHeldThenDelivered(c, tenantId, ids);
  }, 60_000);
});

describe.skipIf(!process.env.DATABASE_URL)("worker processes sharing PostgreSQL", () => {
  afterAll(async () => {
    await Promise.all(children.splice(0).map(stopWorkerProcess));
  });

  it("a 429 recorded by one process holds the sends another process had claimed", async () => {
    children.push(await startWorkerProcess(), await startWorkerProcess());
    // The 429 is answered after 150 ms: by then both processes hold slots of the subscription (each
    // claim takes those within 250 ms, the next process's claim the ones after).
    const c = await throttlingOnce(150);
    const { tenantId, ids } = await subscribedWithBacklog(c.url(), 10);
    // The other process learns of the hold from the 429's record: 150 ms allowed for it to commit.
    await expectHeldThenDelivered(c, tenantId, ids, { answerDelayMs: 150, slackMs: 150 });
  }, 60_000);
});

describe("Inngest engine", () => {
  it("a 429 with Retry-After holds the runs that had already taken a send slot, without spending their attempts", async () => {
    const c = await throttlingOnce();
    const { tenantId, ids } = await subscribedWithBacklog(c.url());
    const events: DeliveryRequested[] = [];
    const dispatcher = createInngestDispatcher(async (sent) => void events.push(...sent));
    await dispatcher.start();
    await eventually(async () => events.length === ids.length);
    await dispatcher.stop();
    // Inngest's durable sleeps, for real: a held run sleeps until the hold is over (read from its row).
    const db = await getDb();
    const untilHoldEnds = async () => {
      const sub = await db.webhookSubscription.findFirstOrThrow({ where: { tenantId } });
      const left = (sub.heldUntil?.getTime() ?? 0) - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    };
    const sleeps = ["backoff-2", "slot-1", "slot-1-2", "slot-2"].map((id) => ({ id, handler: untilHoldEnds }));
    const results = await Promise.all(
      events.map((event) => new InngestTestEngine({ function: deliverWebhook, events: [event as never], steps: sleeps }).execute()),
    );
    expect(results.map((r) => r.result)).toEqual(events.map(() => expect.objectContaining({ status: "delivered" })));
    await expectHeldThenDelivered(c, tenantId, ids);
  }, 60_000);
});

describe("Inngest engine, a hold another process recorded", () => {
  it("an attempt reads the hold from the subscription's row as it starts: nothing is sent until it ends, and no attempt is spent", async () => {
    const c = await startConsumer(200);
    consumers.push(c);
    const { tenantId, ids } = await subscribedWithBacklog(c.url(), 1);
    const events: DeliveryRequested[] = [];
    const dispatcher = createInngestDispatcher(async (sent) => void events.push(...sent));
    await dispatcher.start();
    await eventually(async () => events.length === 1);
    await dispatcher.stop();
    // As another process's 429 record leaves it (the hold only: this process knows nothing of it,
    // and the send slot the run takes first is free now).
    const db = await getDb();
    const { heldUntil } = await db.webhookSubscription.update({
      where: { id: (await db.webhookSubscription.findFirstOrThrow({ where: { tenantId } })).id },
      data: { heldUntil: new Date(Date.now() + HOLD_MS) },
    });
    const untilHoldEnds = async () => {
      const left = heldUntil!.getTime() - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    };
    const result = await new InngestTestEngine({
      function: deliverWebhook,
      events: [events[0] as never],
      steps: [{ id: "slot-1", handler: untilHoldEnds }],
    }).execute();
    expect(result.result).toMatchObject({ status: "delivered", attempt: 1 });
    expect(result.ctx.step.sleep.mock.calls.map((args: unknown[]) => args[0])).toEqual(["slot-1"]);
    expect(c.received.map((r) => r.body.id)).toEqual(ids);
    expect(c.received[0].at).toBeGreaterThanOrEqual(heldUntil!.getTime());
    const [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 1 });
    expect(delivery.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code])).toEqual([[1, "delivered", 200]]);
  }, 60_000);
});
