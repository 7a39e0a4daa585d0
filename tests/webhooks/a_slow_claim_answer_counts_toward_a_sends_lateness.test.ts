// A send's lateness counts the round trip of the statement that gave it its slot. A claim (or a new
// slot's statement) says how long until the slot as the database's clock reads it, at some moment
// between the statement's sending and its answer's arrival. A worker that counted from the answer's
// arrival sent a delivery whose claim answered 150 ms late on its claimed slot, 150 ms after it,
// while other processes send on time at the slots after it: the slots' margin (100 ms over 5 sends at
// rate 5) was gone, and a sliding second held 6 sends. Such a send must give up its slot, take a new
// one (the subscription's next_delivery_at moves past the claimed slot), and go out no earlier than
// that new slot. The Inngest engine's wait for its slot (waitForSendSlot) alike.
//
// The answers are made slow in a controlled way: the worker's claim runner (and its statement runner)
// run the real statement on the real database and hold the answer back for SLOW_ANSWER_MS before
// handing it over, as a loaded machine or network does. Real PostgreSQL or PGlite, a real consumer.
import { afterEach, describe, expect, it } from "vitest";
import { type SqlRunner, openDatabase } from "../../server/db/database";
import { slotGap } from "../../server/webhooks/claim-deliveries";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { reserveSendSlot, waitForSendSlot } from "../../server/webhooks/send-slots";
import { tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, emitInOrder } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

/** How late a slow statement's answer arrives: well over LATE_SEND_MS (40 ms), so a send that counts it is late. */
const SLOW_ANSWER_MS = 150;
/** 2 a second: slots 550 ms apart (1.1 / 2 s), exact in microseconds; a claim's horizon is 500 ms (1 / rate). */
const RATE = 2;
const GAP_US = 550_000;
/**
 * The clocks compared are one machine's, read at different resolutions: Date.now() in whole ms (and a
 * Node timer may fire up to a ms before Date.now() says its time), the database's in microseconds.
 */
const CLOCK_RESOLUTION_MS = 2;

/** The subscription's next free slot (epoch µs) and the last slot taken (a claim or new slots leave it one gap past that). */
const NEXT_SLOT_SQL = `SELECT (extract(epoch FROM s.next_delivery_at) * 1000000)::bigint::text AS next_us,
  (extract(epoch FROM s.next_delivery_at - ${slotGap("s.max_deliveries_per_second")}) * 1000000)::bigint::text AS last_us
  FROM webhook_subscriptions s WHERE s.id = $1::uuid`;
async function nextSlot(subscriptionId: string): Promise<{ nextUs: number; lastSlotMs: number }> {
  const [row] = await (await openDatabase()).prisma.$queryRawUnsafe<{ next_us: string; last_us: string }[]>(NEXT_SLOT_SQL, subscriptionId);
  return { nextUs: Number(row!.next_us), lastSlotMs: Number(row!.last_us) / 1000 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let consumers: Consumer[] = [];
afterEach(async () => {
  await stopEmbeddedWorker();
  for (const c of consumers) await c.close();
  consumers = [];
  // No test meets another's deliveries (a worker started later would claim one left pending).
  await (await openDatabase()).prisma.$executeRawUnsafe("DELETE FROM webhook_deliveries");
});

async function subscriptionAt(url: string) {
  const { tenantId } = await tenantWithKey();
  const sub = await dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["csat.received"], max_deliveries_per_second: RATE });
  return { tenantId, subscriptionId: sub.id };
}

/** A runner that runs each statement for real and hands its answer over SLOW_ANSWER_MS late when `slow(call)` says so. */
function slowAnswers(real: SqlRunner, slow: (call: number) => boolean, onAnswer: (rows: unknown[]) => Promise<void> = async () => {}): SqlRunner {
  let calls = 0;
  return async <Row>(statement: { text: string }, values: unknown[]) => {
    const call = calls++;
    const rows = await real<Row>(statement, values);
    await onAnswer(rows);
    if (slow(call)) await sleep(SLOW_ANSWER_MS);
    return rows;
  };
}

/**
 * Starts the embedded worker with every claim answering SLOW_ANSWER_MS late (and the first
 * `slowStatements` statements of its statement runner: a new slot's is its first); resolves, once
 * the subscription's one delivery is recorded, with the slot its claim gave it and the next free
 * slot the claim left (read before the slow answer is handed over), what the worker was told to
 * wait, the subscription's last slot taken in the end, and when the send started.
 */
async function sendWithSlowClaim(subscriptionId: string, tenantId: string, consumer: Consumer, slowStatements = 0) {
  const claimed: { nextUs: number; waitMs: number }[] = [];
  const claimRunner = slowAnswers(
    (await openDatabase()).generic,
    () => true,
    async (rows) => {
      const row = (rows as { delivery_id: string | null; wait_ms: number | null }[]).find((r) => r.delivery_id);
      if (row) claimed.push({ nextUs: (await nextSlot(subscriptionId)).nextUs, waitMs: row.wait_ms! });
    },
  );
  const sql = slowAnswers((await openDatabase()).writes, (call) => call < slowStatements);
  await openDatabase();
  await startEmbeddedWorker({ claimRunner, sql, pollIntervalMs: 100 });
  await emitInOrder(tenantId, 1);
  await consumer.waitFor(1, 10_000);
  const [delivery] = await eventually(async () => ((list) => list[0]?.status === "delivered" && list)(await deliveriesOf(tenantId)));
  expect(consumer.received).toHaveLength(1);
  expect(delivery!.attempt_count).toBe(1);
  expect(claimed).toHaveLength(1);
  return { claimed: claimed[0]!, end: await nextSlot(subscriptionId), sentAt: Date.parse(delivery!.attempts[0]!.created_at) };
}

describe("a send whose claim answered late", () => {
  it("takes_a_new_slot_when_its_slot_had_already_come_at_the_claim", async () => {
    const consumer = await startConsumer(200);
    consumers.push(consumer);
    const { tenantId, subscriptionId } = await subscriptionAt(consumer.url());
    const { claimed, end, sentAt } = await sendWithSlowClaim(subscriptionId, tenantId, consumer);
    // Its slot was the claim's moment: nothing to wait, judged on time from the answer's arrival alone.
    expect(claimed.waitMs).toBeLessThanOrEqual(0);
    // A new slot after the claimed one (the old worker sent on the claimed slot: the subscription stayed at the claim's next slot).
    expect(end.nextUs - claimed.nextUs).toBeGreaterThanOrEqual(GAP_US);
    // Sent no earlier than the last slot taken.
    expect(sentAt).toBeGreaterThanOrEqual(end.lastSlotMs - CLOCK_RESOLUTION_MS);
  });

  it("takes_a_new_slot_when_its_slot_was_still_ahead_at_the_claim", async () => {
    const consumer = await startConsumer(200);
    consumers.push(consumer);
    const { tenantId, subscriptionId } = await subscriptionAt(consumer.url());
    // The next free slot 400 ms ahead: inside the claim's horizon (500 ms), so the claim takes it and says how long to wait.
    await (await openDatabase()).prisma.$executeRawUnsafe(
      `UPDATE webhook_subscriptions SET next_delivery_at = clock_timestamp() + interval '400 milliseconds' WHERE id = $1::uuid`,
      subscriptionId,
    );
    const { claimed, end, sentAt } = await sendWithSlowClaim(subscriptionId, tenantId, consumer);
    expect(claimed.waitMs).toBeGreaterThan(0);
    expect(end.nextUs - claimed.nextUs).toBeGreaterThanOrEqual(GAP_US);
    expect(sentAt).toBeGreaterThanOrEqual(end.lastSlotMs - CLOCK_RESOLUTION_MS);
  });

  it("takes_another_new_slot_when_the_new_slots_answer_was_late_too", async () => {
    const consumer = await startConsumer(200);
    consumers.push(consumer);
    const { tenantId, subscriptionId } = await subscriptionAt(consumer.url());
    const { claimed, end, sentAt } = await sendWithSlowClaim(subscriptionId, tenantId, consumer, 1);
    // Two new slots: the first one's answer came too late to send on it.
    expect(end.nextUs - claimed.nextUs).toBeGreaterThanOrEqual(2 * GAP_US);
    expect(sentAt).toBeGreaterThanOrEqual(end.lastSlotMs - CLOCK_RESOLUTION_MS);
  });
});

describe("an Inngest run whose slot's answer reached it late (waitForSendSlot)", () => {
  it("takes_a_new_slot_and_returns_no_earlier_than_it", async () => {
    const { tenantId, subscriptionId } = await subscriptionAt("http://127.0.0.1:9/never-sent");
    await emitInOrder(tenantId, 1);
    const [delivery] = await deliveriesOf(tenantId);
    const db = (await openDatabase()).prisma;
    const askedAt = Date.now();
    const waitMs = await reserveSendSlot(db, delivery!.id);
    const taken = await nextSlot(subscriptionId);
    // The answer reaches the run SLOW_ANSWER_MS after it was given.
    await sleep(SLOW_ANSWER_MS);
    await waitForSendSlot(db, delivery!.id, waitMs, askedAt);
    const returnedAt = Date.now();
    const end = await nextSlot(subscriptionId);
    expect(end.nextUs - taken.nextUs).toBeGreaterThanOrEqual(GAP_US);
    expect(returnedAt).toBeGreaterThanOrEqual(end.lastSlotMs - CLOCK_RESOLUTION_MS);
  });
});
