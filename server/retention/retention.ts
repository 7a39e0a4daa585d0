// Retention: how long each kind of customer data is kept, and the purge that deletes what is older.
//
// Each class has an operator period (a setting, documented in the README; 0 keeps forever) that is
// also the bound: a tenant may set a shorter period of its own (tenants.retention_*_days), never a
// longer one. The purge runs per tenant and class in batches of RETENTION_PURGE_BATCH rows, each
// batch one short statement in its own transaction that takes its rows with FOR UPDATE SKIP LOCKED
// (a row a request holds is left for the next run, and the request is never waited on), with a
// pause between batches. It keeps no state: an interrupted purge leaves only whole batches done,
// and the next run (any process) continues from what is left. Analytics totals survive it: the
// daily counters that triggers keep for messages are not decremented by the purge's deletes
// (`app.keep_analytics_counts`, migration retention_and_tenant_lifecycle), and the other totals
// come from tables the purge does not touch (conversations, leads, appointments, CSAT answers).
import { setTimeout as sleep } from "node:timers/promises";
import { backOff, runBatch } from "../db/batch-statement";
import { getDb } from "../db/client";
import { modelColumns } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import { log } from "../lib/log";
import { setting, type SettingName } from "../lib/settings";

const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);
const CALL = modelColumns(Prisma.CallScalarFieldEnum);
const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const AUDIT = modelColumns(Prisma.AuditLogScalarFieldEnum);
const NOTIFICATION = modelColumns(Prisma.NotificationScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

/** The classes of data with a retention period. */
export const RETENTION_CLASSES = ["messages", "call_recordings", "events", "audit_log", "notifications"] as const;
export type RetentionClass = (typeof RETENTION_CLASSES)[number];

/** Up to $3 of tenant $1's rows of `table` older than $2 days, deleted; rows a request holds are skipped. */
const deleteOlderThan = (table: string, column: { id: string; tenantId: string; createdAt: string }) => `DELETE FROM ${table} WHERE ${column.id} IN (
  SELECT ${column.id} FROM ${table} WHERE ${column.tenantId} = $1::uuid AND ${column.createdAt} < now() - make_interval(days => $2::int)
  LIMIT $3::int FOR UPDATE SKIP LOCKED)`;

/** Per class: the operator's setting, the tenant's column (a Tenant field) and what the purge does. */
const CLASSES: Record<RetentionClass, { setting: SettingName; field: keyof typeof TENANT; what: string; sql: string }> = {
  // $1 tenant, $2 period in days, $3 batch size. Each statement touches at most $3 rows.
  messages: {
    setting: "RETENTION_MESSAGES_DAYS",
    field: "retentionMessagesDays",
    what: "messages (texts and call transcripts) deleted",
    sql: deleteOlderThan("messages", MESSAGE),
  },
  call_recordings: {
    setting: "RETENTION_CALL_RECORDINGS_DAYS",
    field: "retentionCallRecordingsDays",
    what: "calls' recording URLs and summaries cleared",
    sql: `UPDATE calls SET ${CALL.recordingUrl} = NULL, ${CALL.summary} = NULL WHERE ${CALL.id} IN (
  SELECT ${CALL.id} FROM calls WHERE ${CALL.tenantId} = $1::uuid AND ${CALL.createdAt} < now() - make_interval(days => $2::int)
    AND (${CALL.recordingUrl} IS NOT NULL OR ${CALL.summary} IS NOT NULL)
  LIMIT $3::int FOR UPDATE SKIP LOCKED)`,
  },
  // An event goes with its deliveries and their attempts (the delivery log: request and response
  // bodies), by the foreign keys' cascades; one still being delivered (or held: a suspended
  // tenant, a disabled endpoint) is kept until its deliveries end.
  events: {
    setting: "RETENTION_EVENTS_DAYS",
    field: "retentionEventsDays",
    what: "events deleted with their deliveries and attempts",
    sql: `DELETE FROM events WHERE ${EVENT.id} IN (
  SELECT e.${EVENT.id} FROM events e WHERE e.${EVENT.tenantId} = $1::uuid AND e.${EVENT.createdAt} < now() - make_interval(days => $2::int)
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.${DELIVERY.eventId} = e.${EVENT.id} AND d.${DELIVERY.status} = 'pending')
  LIMIT $3::int FOR UPDATE SKIP LOCKED)`,
  },
  audit_log: {
    setting: "RETENTION_AUDIT_LOG_DAYS",
    field: "retentionAuditLogDays",
    what: "audit-log entries deleted",
    sql: deleteOlderThan("audit_logs", AUDIT),
  },
  notifications: {
    setting: "RETENTION_NOTIFICATIONS_DAYS",
    field: "retentionNotificationsDays",
    what: "dashboard notifications deleted",
    sql: deleteOlderThan("notifications", NOTIFICATION),
  },
};

/** A tenant period longer than this is refused even when the operator keeps forever (100 years). */
export const MAX_TENANT_DAYS = 36_500;

/** The operator's period for a class (0: kept forever), which is also the tenant's bound. */
export const operatorDays = (cls: RetentionClass): number => setting(CLASSES[cls].setting) as number;

/** The tenant column of a class (`retention_messages_days`…) and its Prisma field. */
export const tenantField = (cls: RetentionClass) => CLASSES[cls].field as "retentionMessagesDays";

/** The longest period a tenant may set for a class. */
export const tenantBound = (cls: RetentionClass): number => operatorDays(cls) || MAX_TENANT_DAYS;

/**
 * The period that applies: the tenant's own (when set), never past the operator's bound (an
 * operator who lowers it later lowers every tenant's with it); null: kept forever.
 */
export function effectiveDays(cls: RetentionClass, tenantDays: number | null | undefined): number | null {
  const operator = operatorDays(cls);
  if (tenantDays == null) return operator || null;
  return operator ? Math.min(tenantDays, operator) : tenantDays;
}

/** A tenant's retention periods as the CLI and the dashboard show them. */
export type RetentionView = Record<RetentionClass, { days: number | null; tenant_days: number | null; operator_days: number | null; max_days: number }>;

type TenantRetentionRow = { id: string; [field: string]: string | number | null };

export function retentionView(row: Record<string, unknown>): RetentionView {
  return Object.fromEntries(
    RETENTION_CLASSES.map((cls) => {
      const own = (row[CLASSES[cls].field] as number | null | undefined) ?? null;
      return [cls, { days: effectiveDays(cls, own), tenant_days: own, operator_days: operatorDays(cls) || null, max_days: tenantBound(cls) }];
    }),
  ) as RetentionView;
}

/**
 * Checks a tenant's requested periods: each an integer from 1 to the class's bound, or null (back to
 * the operator's). Returns the Tenant fields to write, or the problem naming the class.
 */
export function retentionUpdate(
  input: Partial<Record<RetentionClass, number | null>>,
): { data: Record<string, number | null> } | { field: RetentionClass; message: string } {
  const data: Record<string, number | null> = {};
  for (const [cls, value] of Object.entries(input) as [RetentionClass, number | null | undefined][]) {
    if (!RETENTION_CLASSES.includes(cls)) return { field: cls, message: `unknown retention class '${cls}' (one of ${RETENTION_CLASSES.join(", ")})` };
    if (value === undefined) continue;
    const bound = tenantBound(cls);
    if (value !== null && (!Number.isInteger(value) || value < 1 || value > bound)) {
      const why = operatorDays(cls) ? `the operator's bound (${CLASSES[cls].setting})` : "100 years";
      return { field: cls, message: `${cls} must be a whole number of days from 1 to ${bound}, ${why}; got ${value}` };
    }
    data[CLASSES[cls].field] = value;
  }
  return { data };
}

/** Rows a purge changed, per class. */
export type PurgeCounts = Record<RetentionClass, number>;

export type PurgeOptions = {
  /** Only this tenant (default: every tenant not being deleted). */
  tenantId?: string;
  /** Rows per statement (default RETENTION_PURGE_BATCH). */
  batch?: number;
  /** Pause between batches in ms (default RETENTION_PURGE_PAUSE_MS). */
  pauseMs?: number;
  /** Asked between batches: true stops the purge there (a graceful shutdown); the next run continues. */
  shouldStop?: () => boolean;
};

const TENANTS_SQL = `SELECT ${TENANT.id} AS id, ${RETENTION_CLASSES.map((cls) => `${TENANT[CLASSES[cls].field]} AS "${CLASSES[cls].field}"`).join(", ")}
  FROM tenants WHERE (${TENANT.deleteAfter} IS NULL OR ${TENANT.deleteAfter} > now()) AND ($1::uuid IS NULL OR ${TENANT.id} = $1::uuid) ORDER BY ${TENANT.id}`;

/** Deletes (or clears) what is past its retention, tenant by tenant, in batches: the rows changed per class. */
export async function purgeExpired(opts: PurgeOptions = {}): Promise<PurgeCounts> {
  const db = await getDb();
  const batch = opts.batch ?? setting("RETENTION_PURGE_BATCH");
  const pauseMs = opts.pauseMs ?? setting("RETENTION_PURGE_PAUSE_MS");
  const counts = Object.fromEntries(RETENTION_CLASSES.map((cls) => [cls, 0])) as PurgeCounts;
  const tenants = await db.$queryRawUnsafe<TenantRetentionRow[]>(TENANTS_SQL, opts.tenantId ?? null);
  for (const tenant of tenants) {
    for (const cls of RETENTION_CLASSES) {
      const days = effectiveDays(cls, tenant[CLASSES[cls].field] as number | null);
      if (days === null) continue;
      for (;;) {
        if (opts.shouldStop?.()) return counts;
        const started = performance.now();
        const changed = await runBatch(db, CLASSES[cls].sql, [tenant.id, days, batch]);
        counts[cls] += changed;
        if (changed < batch) break;
        await sleep(backOff(pauseMs, performance.now() - started));
      }
    }
  }
  const total = RETENTION_CLASSES.reduce((n, cls) => n + counts[cls], 0);
  if (total > 0) log.info("retention purge", { ...counts });
  return counts;
}
