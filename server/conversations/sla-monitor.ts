// The handoff SLA: a conversation handed to a human (`handoff`) whose customer has waited longer
// than the tenant's `handoff_sla_minutes` since the handoff began for an operator's first message
// emits `sla.breached` once per handoff. A new handoff (leads.service.ts requestLeadHandoff) starts
// the clock again and may breach again.
//
// Exactly once across processes: the breach is claimed by one UPDATE (`sla_breached_at IS NULL`)
// in the transaction that writes the event. Two processes claiming the same conversation at once
// serialize on its row; the second re-checks the condition after the first commits and claims
// nothing. So every server process may run the check (startSlaMonitor), and an Inngest cron may too.
import { database, queryOn } from "../db/database";
import { modelColumns, TABLE } from "../db/columns";
import { modelColumnsSql, TABLE_SQL } from "../db/sql-columns";
import { Prisma } from "../db/generated/client";
import { scopeToTenant } from "../db/tenant-scope";
import { notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { CONVERSATION_EVENTS } from "./conversations.events";
import { startPeriodicJob, stopPeriodicJob, type PeriodicJob } from "../lib/periodic-job";
import { OPERATOR, recordAudit, type AuditActor } from "../audit/record-audit";
import { conversationToWire } from "./conversations.service";
import type { HandoffSla } from "./sla-monitor.types";
import { setting } from "../lib/settings";
import { statement } from "../lib/sql";

const emitEvent = eventEmitter(CONVERSATION_EVENTS);

export { DEFAULT_HANDOFF_SLA_MINUTES, MAX_HANDOFF_SLA_MINUTES, handoffSlaInput, handoffSlaSchema } from "./sla-monitor.types";

const BATCH = 100;

// The statements' column names come from the model (server/db/columns.ts).
const CONVERSATION = modelColumns(Prisma.ConversationScalarFieldEnum);
const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

/**
 * `c` (a conversation joined with its tenant `t`) is in a handoff past its SLA that has not breached
 * yet: no operator message within the SLA after the handoff began. (A reply that came late still
 * counts as a breach, even if no check ran between the deadline and the reply.)
 */
const PAST_SLA = `c.${CONVERSATION.status} = 'handoff' AND c.${CONVERSATION.slaBreachedAt} IS NULL AND c.${CONVERSATION.handoffStartedAt} IS NOT NULL
  AND c.${CONVERSATION.handoffStartedAt} <= now() - make_interval(mins => t.${TENANT.handoffSlaMinutes})
  AND NOT EXISTS (
    SELECT 1 FROM ${TABLE.Message} m
    WHERE m.${MESSAGE.conversationId} = c.${CONVERSATION.id} AND m.${MESSAGE.author} = 'operator'
      AND m.${MESSAGE.createdAt} >= c.${CONVERSATION.handoffStartedAt} AND m.${MESSAGE.createdAt} <= c.${CONVERSATION.handoffStartedAt} + make_interval(mins => t.${TENANT.handoffSlaMinutes})
  )`;

/** Seconds from the handoff to the first operator message after it, or to now without one. */
const WAITED_SECONDS = `floor(extract(epoch FROM coalesce(
  (SELECT min(m.${MESSAGE.createdAt}) FROM ${TABLE.Message} m WHERE m.${MESSAGE.conversationId} = c.${CONVERSATION.id} AND m.${MESSAGE.author} = 'operator' AND m.${MESSAGE.createdAt} >= c.${CONVERSATION.handoffStartedAt}),
  now()) - c.${CONVERSATION.handoffStartedAt}))::int`;

// Every tenant's candidates, oldest handoff first (the (status, handoff_started_at) index).
const CANDIDATES_SQL = statement<{ id: string; tenantId: string }>(`
SELECT c.${CONVERSATION.id}, c.${CONVERSATION.tenantId} AS "tenantId" FROM ${TABLE.Conversation} c JOIN ${TABLE.Tenant} t ON t.${TENANT.id} = c.${CONVERSATION.tenantId}
WHERE ${PAST_SLA}
ORDER BY c.${CONVERSATION.handoffStartedAt}
LIMIT $1::int`);

// The claim: it re-checks the whole condition, so a conversation answered or re-handed meanwhile
// (or claimed by another process) is not claimed.
const CLAIM_SQL = statement<{ waitedSeconds: number; slaMinutes: number }>(`
UPDATE ${TABLE.Conversation} c SET ${CONVERSATION.slaBreachedAt} = now()
FROM ${TABLE.Tenant} t
WHERE c.${CONVERSATION.id} = $1::uuid AND c.${CONVERSATION.tenantId} = $2::uuid AND t.${TENANT.id} = c.${CONVERSATION.tenantId} AND ${PAST_SLA}
RETURNING ${WAITED_SECONDS} AS "waitedSeconds", t.${TENANT.handoffSlaMinutes} AS "slaMinutes"`);

const TENANT_SQL = modelColumnsSql(Prisma.TenantScalarFieldEnum);

/** Claims one conversation's breach and emits `sla.breached`, in one transaction. True when this call claimed it. */
async function claimBreach(conversationId: string, tenantId: string): Promise<boolean> {
  const db = scopeToTenant(database().prisma, tenantId);
  return db.$transaction(async (tx) => {
    const claimed = await queryOn(tx, CLAIM_SQL, [conversationId, tenantId]);
    if (!claimed.length) return false;
    const row = await tx.conversation.findFirst({ where: { id: conversationId } });
    if (!row) return false;
    await emitEvent(tx, "sla.breached", {
      object: conversationToWire(row),
      waited_seconds: claimed[0].waitedSeconds,
      sla_minutes: claimed[0].slaMinutes,
    });
    return true;
  });
}

/** One check over every tenant: how many breaches this call claimed (and emitted). */
export async function checkHandoffSlas(): Promise<number> {
  const db = database().prisma;
  let emitted = 0;
  for (;;) {
    const due = await queryOn(db, CANDIDATES_SQL, [BATCH]);
    for (const { id, tenantId } of due) if (await claimBreach(id, tenantId)) emitted++;
    // A full batch may have more behind it; a short one was everything due.
    if (due.length < BATCH) return emitted;
  }
}

const SLA_JOB = "handoff SLA check";

/** Runs the check every `SLA_CHECK_INTERVAL_MS` (default 30 s; 0 turns it off). */
export function startSlaMonitor(intervalMs = setting("SLA_CHECK_INTERVAL_MS")): PeriodicJob {
  return startPeriodicJob(SLA_JOB, intervalMs, checkHandoffSlas);
}

/** Graceful shutdown: no further checks; waits for one in progress (each claim is one short transaction). */
export const stopSlaMonitor = (): Promise<void> => stopPeriodicJob(SLA_JOB);

/** The tenant's handoff SLA in minutes (the dashboard's setting). */
export async function getHandoffSla(tenantId: string): Promise<HandoffSla> {
  const tenant = await database().prisma.tenant.findUnique({ where: { id: tenantId }, select: { handoffSlaMinutes: true } });
  if (!tenant) throw notFound();
  return { handoff_sla_minutes: tenant.handoffSlaMinutes };
}

/**
 * Changes the tenant's handoff SLA, audited (`tenant.handoff_sla_changed`, from and to) in the same
 * transaction; a value equal to the current one writes nothing. Handoffs already waiting are judged
 * by the new value from the next check.
 */
export async function setHandoffSla(tenantId: string, input: HandoffSla, actor: AuditActor = OPERATOR): Promise<HandoffSla> {
  const db = scopeToTenant(database().prisma, tenantId);
  return db.$transaction(async (tx) => {
    // The row lock orders concurrent changes, so each audit entry's `from` is the value it replaced.
    const [current] = await tx.$queryRaw<
      { minutes: number }[]
    >`SELECT ${TENANT_SQL.handoffSlaMinutes} AS minutes FROM ${TABLE_SQL.Tenant} WHERE ${TENANT_SQL.id} = ${tenantId}::uuid FOR UPDATE`;
    if (!current) throw notFound();
    const to = input.handoff_sla_minutes;
    if (current.minutes === to) return { handoff_sla_minutes: to };
    await tx.tenant.update({ where: { id: tenantId }, data: { handoffSlaMinutes: to } });
    await recordAudit(tx, { ...actor, action: "tenant.handoff_sla_changed", targetType: "tenant", targetId: tenantId, details: { from: current.minutes, to } });
    return { handoff_sla_minutes: to };
  });
}
