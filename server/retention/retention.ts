// Retention: how long each kind of customer data is kept, and the purge that deletes what is older.
//
// Each class has an operator period (a setting, documented in the README; 0 keeps forever) that is
// also the bound: a tenant may set a shorter period of its own (tenants.retention_*_days), never a
// longer one. The purge runs per tenant and class in batches sized to take about BATCH_TARGET_MS
// (20 ms; at most RETENTION_PURGE_BATCH rows), oldest rows first, each batch one short statement in
// its own transaction that takes its rows with FOR UPDATE SKIP LOCKED (a row a request holds is
// left for the next run, and the request is never waited on), with a pause of at least three times
// the batch's own time between batches. It keeps no state (the cursor lives only within a run):
// an interrupted purge leaves only whole batches done, and the next run (any process) continues
// from what is left. Analytics totals survive it: the
// daily counters that triggers keep for messages are not decremented by the purge's deletes
// (`app.keep_analytics_counts`, migration retention_and_tenant_lifecycle), and the other totals
// come from tables the purge does not touch (conversations, leads, appointments, CSAT answers).
import { setTimeout as sleep } from "node:timers/promises";
import { backOff, nextBatchSize, runCursorBatch } from "../db/batch-statement";
import { getDb } from "../db/client";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { log } from "../lib/log";
import { setting, type SettingName } from "../lib/settings";
import { RETENTION_CLASSES, type RetentionClass } from "./retention.types";

const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);
const CALL = modelColumns(Prisma.CallScalarFieldEnum);
const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const ATTEMPT = modelColumns(Prisma.WebhookAttemptScalarFieldEnum);
const AUDIT = modelColumns(Prisma.AuditLogScalarFieldEnum);
const NOTIFICATION = modelColumns(Prisma.NotificationScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

export { RETENTION_CLASSES, type RetentionClass };

type Cols = { id: string; tenantId: string; createdAt: string };

/**
 * One batch of a class's purge as one statement: up to $3 of tenant $1's rows older than $2 days and
 * not older than the cursor $4 (the last batch's newest row), oldest first (the tenant and time
 * index, walked in order: the heap pages a batch touches are neighbours, and the cursor skips the
 * index entries of rows already purged, which a plain LIMIT would re-read on every batch: the cost
 * of a batch stays flat from the first to the last), taken FOR UPDATE SKIP LOCKED (a row a request
 * holds is left for the next run, and the request is never waited on); `action` is the statements
 * that change `doomed`, the last of them named `gone` returning the rows' created_at. Answers
 * `{ n, last }`: the rows changed and the newest one's time, the next batch's cursor.
 */
const batchStatement = (table: string, c: Cols, opts: { where?: string; orderBy: string; action: string }) => `WITH doomed AS MATERIALIZED (
  SELECT t.${c.id} AS id FROM ${table} t
  WHERE t.${c.tenantId} = $1::uuid AND t.${c.createdAt} < now() - make_interval(days => $2::int) AND t.${c.createdAt} >= $4::timestamptz${opts.where ? ` AND ${opts.where}` : ""}
  ORDER BY ${opts.orderBy} LIMIT $3::int FOR UPDATE SKIP LOCKED),
${opts.action}
SELECT count(*)::int AS n, max(created_at) AS last FROM gone`;

const deleteOlderThan = (table: string, c: Cols, orderBy: string) =>
  batchStatement(table, c, {
    orderBy,
    action: `gone AS (DELETE FROM ${table} t USING doomed WHERE t.${c.id} = doomed.id RETURNING t.${c.createdAt} AS created_at)`,
  });

/** Per class: the operator's setting, the tenant's column (a Tenant field) and what the purge does. */
const CLASSES: Record<RetentionClass, { setting: SettingName; field: keyof typeof TENANT; what: string; sql: string }> = {
  // $1 tenant, $2 period in days, $3 batch size, $4 cursor. Each statement touches at most $3 rows
  // (events: $3 events, with their deliveries and attempts).
  messages: {
    setting: "RETENTION_MESSAGES_DAYS",
    field: "retentionMessagesDays",
    what: "messages (texts and call transcripts) deleted",
    sql: deleteOlderThan(TABLE.Message, MESSAGE, `t.${MESSAGE.createdAt}`),
  },
  call_recordings: {
    setting: "RETENTION_CALL_RECORDINGS_DAYS",
    field: "retentionCallRecordingsDays",
    what: "calls' recording URLs and summaries cleared",
    sql: batchStatement(TABLE.Call, CALL, {
      where: `(t.${CALL.recordingUrl} IS NOT NULL OR t.${CALL.summary} IS NOT NULL)`,
      orderBy: `t.${CALL.createdAt}`,
      action: `gone AS (UPDATE ${TABLE.Call} t SET ${CALL.recordingUrl} = NULL, ${CALL.summary} = NULL FROM doomed WHERE t.${CALL.id} = doomed.id
  RETURNING t.${CALL.createdAt} AS created_at)`,
    }),
  },
  // An event goes with its deliveries and their attempts (the delivery log: request and response
  // bodies), deleted children first in the same statement, so the foreign keys' cascades find
  // nothing left to do row by row; one still being delivered (or held: a suspended tenant, a
  // disabled endpoint) is kept until its deliveries end.
  events: {
    setting: "RETENTION_EVENTS_DAYS",
    field: "retentionEventsDays",
    what: "events deleted with their deliveries and attempts",
    sql: batchStatement(TABLE.Event, EVENT, {
      where: `NOT EXISTS (SELECT 1 FROM ${TABLE.WebhookDelivery} d WHERE d.${DELIVERY.eventId} = t.${EVENT.id} AND d.${DELIVERY.status} = 'pending')`,
      orderBy: `t.${EVENT.createdAt}, t.${EVENT.id}`,
      action: `attempts AS (DELETE FROM ${TABLE.WebhookAttempt} a USING ${TABLE.WebhookDelivery} d, doomed
  WHERE d.${DELIVERY.eventId} = doomed.id AND a.${ATTEMPT.deliveryId} = d.${DELIVERY.id}),
deliveries AS (DELETE FROM ${TABLE.WebhookDelivery} d USING doomed WHERE d.${DELIVERY.eventId} = doomed.id),
gone AS (DELETE FROM ${TABLE.Event} t USING doomed WHERE t.${EVENT.id} = doomed.id RETURNING t.${EVENT.createdAt} AS created_at)`,
    }),
  },
  audit_log: {
    setting: "RETENTION_AUDIT_LOG_DAYS",
    field: "retentionAuditLogDays",
    what: "audit-log entries deleted",
    sql: deleteOlderThan(TABLE.AuditLog, AUDIT, `t.${AUDIT.createdAt}, t.${AUDIT.id}`),
  },
  notifications: {
    setting: "RETENTION_NOTIFICATIONS_DAYS",
    field: "retentionNotificationsDays",
    what: "dashboard notifications deleted",
    sql: deleteOlderThan(TABLE.Notification, NOTIFICATION, `t.${NOTIFICATION.createdAt}, t.${NOTIFICATION.id}`),
  },
};

/** A tenant period longer than this is refused even when the operator keeps forever (100 years). */
const MAX_TENANT_DAYS = 36_500;

/** The operator's period for a class (0: kept forever), which is also the tenant's bound. */
const operatorDays = (cls: RetentionClass): number => setting(CLASSES[cls].setting) as number;

/** The longest period a tenant may set for a class. */
const tenantBound = (cls: RetentionClass): number => operatorDays(cls) || MAX_TENANT_DAYS;

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

/** The first batch's rows, before it is timed (then nextBatchSize adapts it). */
const FIRST_BATCH = 100;

/** Rows a purge changed, per class. */
export type PurgeCounts = Record<RetentionClass, number>;

export type PurgeOptions = {
  /** Only this tenant (default: every tenant not being deleted). */
  tenantId?: string;
  /** Most rows per statement (default RETENTION_PURGE_BATCH); fewer while batches take longer than BATCH_TARGET_MS. */
  batch?: number;
  /** Pause between batches in ms (default RETENTION_PURGE_PAUSE_MS). */
  pauseMs?: number;
  /** Asked between batches: true stops the purge there (a graceful shutdown); the next run continues. */
  shouldStop?: () => boolean;
};

const TENANTS_SQL = `SELECT ${TENANT.id} AS id, ${RETENTION_CLASSES.map((cls) => `${TENANT[CLASSES[cls].field]} AS "${CLASSES[cls].field}"`).join(", ")}
  FROM ${TABLE.Tenant} WHERE (${TENANT.deleteAfter} IS NULL OR ${TENANT.deleteAfter} > now()) AND ($1::uuid IS NULL OR ${TENANT.id} = $1::uuid) ORDER BY ${TENANT.id}`;

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
      // The batch size adapts to how long a batch takes (BATCH_TARGET_MS), up to `batch` rows.
      let size = Math.min(batch, FIRST_BATCH);
      let cursor = "-infinity";
      for (;;) {
        if (opts.shouldStop?.()) return counts;
        const started = performance.now();
        const { n, last } = await runCursorBatch(db, CLASSES[cls].sql, [tenant.id, days, size, cursor]);
        const took = performance.now() - started;
        counts[cls] += n;
        if (n < size || last === null) break;
        cursor = new Date(last).toISOString();
        size = nextBatchSize(size, took, batch);
        await sleep(backOff(pauseMs, took));
      }
    }
  }
  const total = RETENTION_CLASSES.reduce((n, cls) => n + counts[cls], 0);
  if (total > 0) log.info({ ...counts }, "retention purge");
  return counts;
}
