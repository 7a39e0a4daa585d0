// Outbound messages whose sender died mid-send (a crash or restart between the driver call and the
// final write) stay `queued` with a claim that runs out. This sweep claims those messages, sends
// them again with the same message id (the http driver sends it as `Idempotency-Key`, so a provider
// that got the first attempt can drop the second; Twilio's and WhatsApp Cloud's APIs take no such
// key, so through them a repeated send may reach the customer twice: at least once, never lost)
// and records the outcome like any send, through the driver a new send would use. A message
// interrupted more than an hour ago is ended `failed` instead: a reply that late would confuse the
// customer more than it helps.
import { getDb } from "../db/client";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { scopeToTenant } from "../db/tenant-scope";
import { driverForConversation, longestSendTimeoutMs } from "../channels/channel-driver";
import { log } from "../lib/log";
import { startPeriodicJob, stopPeriodicJob, type PeriodicJob } from "../lib/periodic-job";
import { deliverQueuedMessage, recordSendOutcome, sendClaimMs } from "./conversations.service";
import { setting } from "../lib/settings";

export const MAX_RESEND_AGE_MS = 3_600_000;
const BATCH = 20;

// One statement claims a batch, so sweeps in several processes never take the same message. Its
// column names come from the model (server/db/columns.ts).
const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);
const CLAIM_SQL = `
WITH due AS (
  SELECT ${MESSAGE.id} FROM ${TABLE.Message}
  WHERE ${MESSAGE.sendClaimedUntil} <= now() AND ${MESSAGE.status} = 'queued'
  ORDER BY ${MESSAGE.sendClaimedUntil}
  LIMIT $1::int
  FOR UPDATE SKIP LOCKED
)
UPDATE ${TABLE.Message} m SET ${MESSAGE.sendClaimedUntil} = now() + make_interval(secs => $2::int / 1000.0)
FROM due WHERE m.${MESSAGE.id} = due.${MESSAGE.id}
RETURNING m.${MESSAGE.id}, m.${MESSAGE.tenantId} AS "tenantId", m.${MESSAGE.createdAt} AS "createdAt"`;

/** One sweep: how many interrupted messages it resent or ended. */
export async function resendInterruptedMessages(): Promise<number> {
  const claimMs = sendClaimMs({ timeoutMs: longestSendTimeoutMs() });
  const db = await getDb();
  const claimed = await db.$queryRawUnsafe<{ id: string; tenantId: string; createdAt: Date }[]>(CLAIM_SQL, BATCH, claimMs);
  for (const { id, tenantId, createdAt } of claimed) {
    const tenantDb = scopeToTenant(db, tenantId);
    const message = await tenantDb.message.findFirst({ where: { id } });
    const conversation = message && (await tenantDb.conversation.findFirst({ where: { id: message.conversationId } }));
    if (!message || !conversation) continue; // deleted with its conversation meanwhile
    // The same choice a new send makes: the channel's connected provider, else the environment's driver.
    const driver = await driverForConversation(tenantDb, conversation);
    if (Date.now() - createdAt.getTime() > MAX_RESEND_AGE_MS) {
      log.warn({ message_id: id }, "interrupted outbound message too old to send again; ending it failed");
      await recordSendOutcome(tenantDb, driver, conversation, id, { ok: false, error: "send interrupted; not sent again after 1 hour" });
    } else {
      log.warn({ message_id: id, driver: driver.name }, "sending an interrupted outbound message again");
      await deliverQueuedMessage(tenantDb, driver, conversation, message);
    }
  }
  return claimed.length;
}

const SEND_RECOVERY_JOB = "outbound send recovery";

/** Runs the sweep every `SEND_RECOVERY_INTERVAL_MS` (default 30 s; 0 turns it off). */
export const startSendRecovery = (intervalMs = setting("SEND_RECOVERY_INTERVAL_MS")): PeriodicJob =>
  startPeriodicJob(SEND_RECOVERY_JOB, intervalMs, resendInterruptedMessages);

/** Graceful shutdown: no further sweeps; waits for one in progress (its sends are bounded by the driver's timeout). */
export const stopSendRecovery = (): Promise<void> => stopPeriodicJob(SEND_RECOVERY_JOB);
