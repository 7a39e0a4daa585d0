// A consumer's 429 with Retry-After holds its whole subscription (docs/contract.md). The hold's end
// is on the subscription's row (`held_until`, set with the 429's record): claims skip the
// subscription until then (its next send slot moved with it), an Inngest run's attempt reads it in
// the statement that marks the attempt started, and the embedded worker's sends already claimed
// check it before they go: this process's own 429s from the Map below (noted the moment the consumer
// answered, before the record), others' from the row, read by a send that waited since its claim.
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/client";

/**
 * A send going more than this long after its claim answered reads its subscription's hold from the
 * row (one primary-key read) before it goes; a sooner one relies on the claim's own reading. As
 * long as a send may be late for its slot (LATE_SEND_MS): the order of time of the sends already on
 * their way when a 429 is answered.
 */
export const HOLD_RECHECK_AFTER_MS = 40;

/** Subscription id -> epoch ms (this process's clock) when its hold ends. */
const holds = new Map<string, number>();

/** Holds the subscription `ms` from now in this process (a longer hold already known stands). */
export function holdSubscription(subscriptionId: string, ms: number): void {
  if (!(ms > 0)) return;
  const until = Date.now() + ms;
  if ((holds.get(subscriptionId) ?? 0) >= until) return;
  if (holds.size >= 10_000) forgetEnded();
  holds.set(subscriptionId, until);
}

/** How long the subscription is still held, in ms, as far as this process knows (0: not held). */
export function heldFor(subscriptionId: string): number {
  if (!holds.size) return 0;
  const until = holds.get(subscriptionId);
  if (until === undefined) return 0;
  const left = until - Date.now();
  if (left > 0) return left;
  holds.delete(subscriptionId);
  return 0;
}

const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const READ_HOLD = {
  text: `SELECT ceil(extract(epoch FROM ${SUBSCRIPTION.heldUntil} - clock_timestamp()) * 1000)::int AS held_ms FROM ${TABLE.WebhookSubscription}
    WHERE ${SUBSCRIPTION.id} = $1::uuid AND ${SUBSCRIPTION.heldUntil} > clock_timestamp()`,
};

/**
 * The subscription's hold as its row says (any process's 429), in ms, noted here too; 0 when not
 * held, or when the database cannot say (the send goes, as it would have without this reading).
 */
export async function readHold(sql: SqlRunner, subscriptionId: string): Promise<number> {
  const rows = await sql<{ held_ms: number }>(READ_HOLD, [subscriptionId]).catch(() => []);
  const ms = rows[0]?.held_ms ?? 0;
  holdSubscription(subscriptionId, ms);
  return ms;
}

function forgetEnded() {
  const now = Date.now();
  for (const [id, until] of holds) if (until <= now) holds.delete(id);
}
