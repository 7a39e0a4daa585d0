// A tenant's life as the operator runs it: usage, suspension, resumption and deletion.
//
// Suspended (tenants.suspended_at): the tenant's API keys, agent tools (REST and MCP) and dashboard
// sessions are refused with 403 `forbidden` "tenant suspended" (the check rides on the key lookup
// itself, server/auth/authenticate.ts); its outbound deliveries are not claimed (they wait, pending,
// in order, spending no attempt: server/webhooks/claim-deliveries.ts); the providers' receivers
// keep storing what they are sent, and the events it causes wait too. Resuming delivers them.
//
// Deleted: `tenant delete` suspends the tenant and sets tenants.delete_after (now + the grace
// period, or now with `--now`); `tenant resume` before then cancels. From then on the tenant's
// rows are deleted table by table in batches (each one short statement, so other tenants'
// requests never wait behind it), by the CLI and by every process's retention job, until the
// tenant row itself goes. Nothing is remembered between batches but the rows left: an interrupted
// deletion continues where it stopped, in any process.
import { setTimeout as sleep } from "node:timers/promises";
import { OPERATOR } from "../audit/record-audit";
import { backOff, nextBatchSize, runBatch } from "../db/batch-statement";
import { getDb } from "../db/client";
import { columnName, modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import type { Tx } from "../db/client";
import { UsageError } from "../lib/cli";
import { log } from "../lib/log";
import { setting } from "../lib/settings";

/** A tenant's state: `active`, `suspended`, `deletion_scheduled` (grace period) or `deleting`. */
export type TenantStatus = "active" | "suspended" | "deletion_scheduled" | "deleting";

function tenantStatus(row: { suspendedAt: Date | null; deleteAfter: Date | null }, now = new Date()): TenantStatus {
  if (row.deleteAfter) return row.deleteAfter <= now ? "deleting" : "deletion_scheduled";
  return row.suspendedAt ? "suspended" : "active";
}

async function findTenant(tenantId: string) {
  const db = await getDb();
  const tenant = await db.tenant.findUnique({ where: { id: tenantId } });
  if (!tenant) throw new UsageError(`tenant ${tenantId} not found`);
  return tenant;
}

/** The operator's audit entry of a lifecycle change, in its transaction. */
const audit = (
  tx: Tx,
  tenantId: string,
  entry: {
    action: string;
    targetType: string;
    targetId: string;
    details: Record<string, unknown>;
    actorType: string;
    actorId: string | null;
    actorLabel: string | null;
  },
) => tx.auditLog.create({ data: { tenantId, ...entry, details: entry.details as object } });

const lifecycleView = (t: { id: string; suspendedAt: Date | null; deleteAfter: Date | null }) => ({
  id: t.id,
  status: tenantStatus(t),
  suspended_at: t.suspendedAt?.toISOString() ?? null,
  delete_after: t.deleteAfter?.toISOString() ?? null,
});

/** Suspends a tenant (idempotent: suspending a suspended tenant changes nothing and audits nothing). */
export async function suspendTenant(tenantId: string, reason?: string) {
  const tenant = await findTenant(tenantId);
  if (tenant.suspendedAt) return lifecycleView(tenant);
  const db = await getDb();
  const updated = await db.$transaction(async (tx) => {
    const row = await tx.tenant.update({ where: { id: tenantId }, data: { suspendedAt: new Date() } });
    await audit(tx, tenantId, {
      ...OPERATOR,
      action: "tenant.suspended",
      targetType: "tenant",
      targetId: tenantId,
      details: reason ? { reason } : {},
    });
    return row;
  });
  return lifecycleView(updated);
}

/** Resumes a suspended tenant, cancelling a deletion still in its grace period. */
export async function resumeTenant(tenantId: string) {
  const tenant = await findTenant(tenantId);
  if (tenant.deleteAfter && tenant.deleteAfter <= new Date()) throw new UsageError(`tenant ${tenantId} is being deleted; it cannot be resumed`);
  if (!tenant.suspendedAt && !tenant.deleteAfter) return lifecycleView(tenant);
  const db = await getDb();
  const updated = await db.$transaction(async (tx) => {
    // Conditional: a deletion that came due meanwhile is not undone.
    const changed = await tx.tenant.updateMany({
      where: { id: tenantId, OR: [{ deleteAfter: null }, { deleteAfter: { gt: new Date() } }] },
      data: { suspendedAt: null, deleteAfter: null },
    });
    if (changed.count === 0) throw new UsageError(`tenant ${tenantId} is being deleted; it cannot be resumed`);
    await audit(tx, tenantId, {
      ...OPERATOR,
      action: "tenant.resumed",
      targetType: "tenant",
      targetId: tenantId,
      details: tenant.deleteAfter ? { deletion_cancelled: true } : {},
    });
    return tx.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  });
  return lifecycleView(updated);
}

/**
 * Schedules a tenant's deletion after the grace period (`now`: at once). The tenant is suspended
 * from this moment. Asking again never postpones a deletion already due.
 */
export async function scheduleTenantDeletion(tenantId: string, opts: { now?: boolean } = {}) {
  const tenant = await findTenant(tenantId);
  const due = new Date(Date.now() + (opts.now ? 0 : setting("TENANT_DELETE_GRACE_HOURS") * 3_600_000));
  const deleteAfter = tenant.deleteAfter && tenant.deleteAfter <= due ? tenant.deleteAfter : due;
  const db = await getDb();
  const updated = await db.$transaction(async (tx) => {
    const row = await tx.tenant.update({ where: { id: tenantId }, data: { suspendedAt: tenant.suspendedAt ?? new Date(), deleteAfter } });
    await audit(tx, tenantId, {
      ...OPERATOR,
      action: "tenant.deletion_scheduled",
      targetType: "tenant",
      targetId: tenantId,
      details: { delete_after: deleteAfter.toISOString() },
    });
    return row;
  });
  return lifecycleView(updated);
}

/** Writes a tenant's own retention periods (checked by retentionUpdate), audited. */
export async function setTenantRetention(
  tenantId: string,
  data: Record<string, number | null>,
  requested: Record<string, number | null | undefined>,
  actor: { actorType: string; actorId: string | null; actorLabel: string | null } = OPERATOR,
) {
  await findTenant(tenantId);
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.tenant.update({ where: { id: tenantId }, data });
    await audit(tx, tenantId, { ...actor, action: "tenant.retention_changed", targetType: "tenant", targetId: tenantId, details: { days: requested } });
  });
}

/**
 * The tables holding a tenant's rows, in the order their rows are deleted: what lets data in first
 * (channel connections, keys, memberships), then children before parents, so no batch cascades
 * into another table. A table with a tenant column that is not listed is found in the catalog and
 * deleted after these (a table added later is not left behind); the tenant row goes last, and its
 * foreign keys' cascades take whatever arrived meanwhile.
 */
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

const DELETION_ORDER: { table: string; column: string }[] = [
  { table: TABLE.ChannelConnection, column: columnName("tenantId") },
  { table: TABLE.ApiKey, column: columnName("tenantId") },
  { table: TABLE.Member, column: columnName("organizationId") },
  { table: TABLE.Invitation, column: columnName("organizationId") },
  { table: TABLE.WebhookAttempt, column: columnName("tenantId") },
  { table: TABLE.WebhookDelivery, column: columnName("tenantId") },
  { table: TABLE.Event, column: columnName("tenantId") },
  { table: TABLE.WebhookSubscription, column: columnName("tenantId") },
  { table: TABLE.Message, column: columnName("tenantId") },
  { table: TABLE.Call, column: columnName("tenantId") },
  { table: TABLE.CsatResponse, column: columnName("tenantId") },
  { table: TABLE.Appointment, column: columnName("tenantId") },
  { table: TABLE.Lead, column: columnName("tenantId") },
  { table: TABLE.Conversation, column: columnName("tenantId") },
  { table: TABLE.Offering, column: columnName("tenantId") },
  { table: TABLE.Notification, column: columnName("tenantId") },
  { table: TABLE.ToolCall, column: columnName("tenantId") },
  { table: TABLE.IdempotentResponse, column: columnName("tenantId") },
  { table: TABLE.CrmConnection, column: columnName("tenantId") },
  { table: TABLE.AnalyticsDailyCount, column: columnName("tenantId") },
  { table: TABLE.AuditLog, column: columnName("tenantId") },
];

/** Columns that name a tenant (better-auth's tables call it an organization). */
const TENANT_COLUMNS = ["tenant_id", "organization_id"];

/** Every (table, column) of the schema holding a tenant's id, from the catalog. */
async function tenantTables(): Promise<{ table: string; column: string }[]> {
  const db = await getDb();
  return db.$queryRawUnsafe<{ table: string; column: string }[]>(
    `SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name = ANY($1::text[]) AND table_name <> '${TABLE.Tenant}' ORDER BY 1`,
    TENANT_COLUMNS,
  );
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** One batch of a table's rows of a tenant ($1 tenant, $2 batch), by physical row id (every table has one, keyed or not). */
const batchDeleteSql = (table: string, column: string) => {
  const t = quoteIdent(table);
  const c = quoteIdent(column);
  return `DELETE FROM ${t} WHERE ${c} = $1::uuid AND ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${c} = $1::uuid LIMIT $2::int))`;
};

export type DeletionOptions = { batch?: number; pauseMs?: number; shouldStop?: () => boolean };

/**
 * Deletes every row of a tenant whose deletion is due, in batches, then the tenant itself: the rows
 * deleted per table, and whether it finished (false: stopped by `shouldStop`; run it again to continue).
 */
export async function deleteTenantData(
  tenantId: string,
  opts: DeletionOptions = {},
): Promise<{ tenant_id: string; deleted: Record<string, number>; done: boolean }> {
  const db = await getDb();
  const tenant = await db.tenant.findUnique({ where: { id: tenantId }, select: { deleteAfter: true } });
  if (!tenant) return { tenant_id: tenantId, deleted: {}, done: true };
  if (!tenant.deleteAfter || tenant.deleteAfter > new Date())
    throw new UsageError(`tenant ${tenantId} has no deletion due (run 'tenant delete ${tenantId}' first)`);
  const batch = opts.batch ?? setting("RETENTION_PURGE_BATCH");
  const pauseMs = opts.pauseMs ?? setting("RETENTION_PURGE_PAUSE_MS");
  const known = new Set(DELETION_ORDER.map((t) => `${t.table}.${t.column}`));
  const others = (await tenantTables()).filter((t) => !known.has(`${t.table}.${t.column}`));
  const deleted: Record<string, number> = {};
  // Signed-in dashboard sessions lose the tenant as their active one.
  await db.session.updateMany({ where: { activeOrganizationId: tenantId }, data: { activeOrganizationId: null } });
  // Batches sized to take about BATCH_TARGET_MS, as the purge's: a busy machine or wide rows make them smaller.
  let size = Math.min(100, batch);
  for (const { table, column } of [...DELETION_ORDER, ...others]) {
    const sql = batchDeleteSql(table, column);
    for (;;) {
      if (opts.shouldStop?.()) return { tenant_id: tenantId, deleted, done: false };
      const started = performance.now();
      const n = await runBatch(db, sql, [tenantId, size]);
      if (n) deleted[table] = (deleted[table] ?? 0) + n;
      if (n < size) break;
      const took = performance.now() - started;
      size = nextBatchSize(size, took, batch);
      await sleep(backOff(pauseMs, took));
    }
  }
  await runBatch(db, `DELETE FROM ${TABLE.Tenant} WHERE ${TENANT.id} = $1::uuid`, [tenantId]);
  log.info({ tenant_id: tenantId, rows: Object.values(deleted).reduce((a, b) => a + b, 0) }, "tenant deleted");
  return { tenant_id: tenantId, deleted, done: true };
}

/** Continues every deletion that is due (the retention job's second half): the tenants finished. */
export async function continueDueDeletions(opts: DeletionOptions = {}): Promise<string[]> {
  const db = await getDb();
  const due = await db.tenant.findMany({ where: { deleteAfter: { lte: new Date() } }, select: { id: true }, orderBy: { deleteAfter: "asc" } });
  const finished: string[] = [];
  for (const { id } of due) {
    if (opts.shouldStop?.()) break;
    const result = await deleteTenantData(id, opts);
    if (result.done) finished.push(id);
  }
  return finished;
}

/** Rows per table of every tenant (one grouped count per table), with active keys and webhook endpoints. */
async function tenantUsage(): Promise<Map<string, Record<string, number>>> {
  const db = await getDb();
  const usage = new Map<string, Record<string, number>>();
  for (const { table, column } of await tenantTables()) {
    if (table === "analytics_daily_counts") continue; // counters, not data
    const rows = await db.$queryRawUnsafe<{ tenant: string; n: number }[]>(
      `SELECT ${quoteIdent(column)}::text AS tenant, count(*)::int AS n FROM ${quoteIdent(table)} GROUP BY 1`,
    );
    for (const { tenant, n } of rows) {
      const entry = usage.get(tenant) ?? {};
      entry[table] = n;
      usage.set(tenant, entry);
    }
  }
  return usage;
}

/** `tenant list`: every tenant with its status and usage. */
export async function listTenants() {
  const db = await getDb();
  const [tenants, usage, keys, endpoints] = await Promise.all([
    db.tenant.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    tenantUsage(),
    db.apiKey.groupBy({ by: ["tenantId"], where: { revokedAt: null }, _count: { _all: true } }),
    db.webhookSubscription.groupBy({ by: ["tenantId", "enabled"], _count: { _all: true } }),
  ]);
  const activeKeys = new Map(keys.map((k) => [k.tenantId, k._count._all]));
  return tenants.map((t) => {
    const mine = endpoints.filter((e) => e.tenantId === t.id);
    return {
      ...lifecycleView(t), // id, status, suspended_at, delete_after
      name: t.name,
      slug: t.slug,
      created_at: t.createdAt.toISOString(),
      api_keys: activeKeys.get(t.id) ?? 0,
      webhook_endpoints: {
        enabled: mine.filter((e) => e.enabled).reduce((n, e) => n + e._count._all, 0),
        disabled: mine.filter((e) => !e.enabled).reduce((n, e) => n + e._count._all, 0),
      },
      rows: usage.get(t.id) ?? {},
    };
  });
}
