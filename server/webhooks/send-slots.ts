// The outbound rate limit's send slots: each subscription's `next_delivery_at` is its next free
// slot, shared by every worker process and Inngest run (one row, updated atomically). A slot is
// 1 / max_deliveries_per_second after the one before; a consumer's 429 with Retry-After moves it later.
import { modelColumns, TABLE } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import type { SqlRunner } from "../db/client";
import { slotGap } from "./claim-deliveries";

/**
 * A send more than this late for its slot (a stall, a cold start, a slow answer) takes a new slot:
 * under the slots' margin (PACE_MARGIN of a second), with room left for the network. Measured from
 * the earliest the slot can be in the sender's clock (SendSlot's `from`), so it includes the round
 * trip of the statement that gave the slot.
 */
const LATE_SEND_MS = 40;

/**
 * A send slot in the sender's clock. The statement that took it said `wait_ms` until it, read on the
 * database's clock at some moment between the statement's sending (`askedAt`) and its answer's
 * arrival: the slot lies between `from` (askedAt + wait) and `at` (arrival + wait). A send waits
 * until `at`, so it is never early, and counts its lateness from `from` (sendIsLate), so a slow
 * answer counts: judged from `at` alone, a send could go out LATE_SEND_MS plus a round trip after its
 * slot, and on a loaded machine crowd the slots after it past their margin.
 */
export type SendSlot = { at: number; from: number };

/** The slot `waitMs` after a statement sent at `askedAt` (epoch ms) and answered now. */
export const sendSlot = (askedAt: number, waitMs: number): SendSlot => ({ at: Date.now() + waitMs, from: askedAt + waitMs });

/** The slot `ms` after `slot` (the next ones of a run of slots taken together). */
export const slotAfter = (slot: SendSlot, ms: number): SendSlot => ({ at: slot.at + ms, from: slot.from + ms });

/** Whether a send now is more than LATE_SEND_MS after its slot, counted from the earliest the slot can be. */
export const sendIsLate = (slot: SendSlot): boolean => Date.now() - slot.from > LATE_SEND_MS;

// Columns named through the model (server/db/columns.ts).
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const GAP = slotGap(`s.${SUBSCRIPTION.maxDeliveriesPerSecond}`);
/** Takes $2 consecutive slots of the subscription of delivery $1: how long until the first, and the gap between them. */
const RESERVE_SLOTS_SQL = `UPDATE ${TABLE.WebhookSubscription} s
       SET ${SUBSCRIPTION.nextDeliveryAt} = greatest(s.${SUBSCRIPTION.nextDeliveryAt}, clock_timestamp()) + $2::int * ${GAP}
     FROM ${TABLE.WebhookDelivery} d WHERE d.${DELIVERY.id} = $1::uuid AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId}
     RETURNING ceil(extract(epoch FROM s.${SUBSCRIPTION.nextDeliveryAt} - $2::int * ${GAP} - clock_timestamp()) * 1000)::int AS wait_ms,
       (extract(epoch FROM ${GAP}) * 1000)::float8 AS gap_ms`;
const RESERVE_SLOTS = { text: RESERVE_SLOTS_SQL };

/**
 * Takes the subscription's next send slot and returns how long until it, in ms (0 when the delivery
 * is gone; below 0 when the statement itself ran that much past the slot: the caller is already late).
 */
export async function reserveSendSlot(db: PrismaClient, deliveryId: string): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ wait_ms: number }[]>(RESERVE_SLOTS_SQL, deliveryId, 1);
  return rows[0]?.wait_ms ?? 0;
}

/**
 * Takes `count` consecutive send slots of the delivery's subscription in one statement (a late send
 * and those queued behind it): `waitMs` until the first, as reserveSendSlot, and `gapMs` between them.
 */
export async function reserveSendSlots(sql: SqlRunner, deliveryId: string, count: number): Promise<{ waitMs: number; gapMs: number }> {
  const rows = await sql<{ wait_ms: number; gap_ms: number }>(RESERVE_SLOTS, [deliveryId, count]);
  return { waitMs: rows[0]?.wait_ms ?? 0, gapMs: Number(rows[0]?.gap_ms ?? 0) };
}

/** The longest wait a late sender accepts for a new slot (within one lease). */
export const MAX_RESLOT_WAIT_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for a slot taken a moment ago (an Inngest run's attempt): `waitMs` as the statement sent at
 * `askedAt` (epoch ms) answered. More than LATE_SEND_MS late for it (sendIsLate), it takes a new slot
 * and waits for that instead (a few times at most), so a late run never crowds the slots after its
 * own: sends stay 1/rate apart at the consumer. (The embedded worker keeps order instead: its late
 * send pushes this process's later ones.)
 */
export async function waitForSendSlot(db: PrismaClient, deliveryId: string, waitMs: number, askedAt: number): Promise<void> {
  let slot = sendSlot(askedAt, waitMs);
  for (let tries = 0; ; tries++) {
    if (slot.at > Date.now()) await sleep(slot.at - Date.now());
    if (!sendIsLate(slot) || tries >= 3) return;
    const reslotAskedAt = Date.now();
    const next = await reserveSendSlot(db, deliveryId);
    // A slot that far off means the target was paused (a 429) after this claim: send on the claimed slot.
    if (next > MAX_RESLOT_WAIT_MS) return;
    slot = sendSlot(reslotAskedAt, next);
  }
}
