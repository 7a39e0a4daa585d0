// A tenant's data as JSON lines (GDPR art. 20, and an operator's way out): one line per row, each
// `{"resource": "<table>", "data": {<column>: <value>, …}}`, the resources one after the other, between
// a header line (`resource: "export"`) and a trailer (`resource: "export_end"`, with the count of
// each resource). docs/data-rights.md documents the format.
//
// Nothing is held in memory beyond one page: every resource is read in keyset pages (by
// (created_at, id), or a child resource by pages of its parent's ids), and the consumer pulls lines
// (an async generator), so a slow download reads the database as slowly. Secrets never leave:
// key hashes and salts, webhook secrets, CRM and channel credentials, invitation link hashes, and
// the stored answers of `Idempotency-Key` requests (a replay cache that may hold a secret shown once).
import { Prisma } from "../db/generated/client";
import { columnName } from "../db/columns";
import { getDb, type Db } from "../db/client";

/** Rows per page. */
const EXPORT_PAGE_SIZE = 500;
const EXPORT_FORMAT = { format: "tenant-export", version: 1 } as const;

type Row = Record<string, unknown>;
type Delegate = { findMany(args: object): Promise<Row[]> };

type Resource = {
  /** The line's `resource`: the table's name. */
  name: string;
  model: Prisma.ModelName;
  /** The tenant column (`organizationId` for better-auth's tables). */
  tenantField?: "tenantId" | "organizationId";
  /** Fields never exported. */
  omit?: readonly string[];
  /** A child read by pages of its parent's ids instead of by the tenant (no index of its own by tenant). */
  parent?: { model: Prisma.ModelName; field: string; order: readonly string[] };
  /** The order of a resource with no (created_at, id) key. */
  order?: readonly string[];
  /** Extra fields read with the row (a member's user). */
  include?: object;
};

/** Every tenant resource, in the order they are written. The tenants row itself comes first. */
export const EXPORT_RESOURCES: readonly Resource[] = [
  { name: "members", model: "Member", tenantField: "organizationId", include: { user: { select: { email: true, name: true } } } },
  { name: "invitations", model: "Invitation", tenantField: "organizationId", omit: ["secretHash"] },
  { name: "api_keys", model: "ApiKey", omit: ["salt", "hash"] },
  { name: "audit_logs", model: "AuditLog" },
  { name: "offerings", model: "Offering" },
  { name: "conversations", model: "Conversation" },
  { name: "messages", model: "Message" },
  { name: "calls", model: "Call", parent: { model: "Conversation", field: "conversationId", order: ["conversationId", "startedAt", "id"] } },
  { name: "leads", model: "Lead" },
  { name: "appointments", model: "Appointment" },
  { name: "csat_responses", model: "CsatResponse" },
  { name: "events", model: "Event" },
  { name: "webhook_subscriptions", model: "WebhookSubscription", omit: ["secretEncrypted", "previousSecretEncrypted"] },
  { name: "webhook_deliveries", model: "WebhookDelivery" },
  {
    name: "webhook_attempts",
    model: "WebhookAttempt",
    parent: { model: "WebhookDelivery", field: "deliveryId", order: ["deliveryId", "cycle", "attemptNumber"] },
  },
  { name: "notifications", model: "Notification" },
  { name: "crm_connections", model: "CrmConnection", omit: ["credentialsEncrypted"] },
  { name: "channel_connections", model: "ChannelConnection", omit: ["credentialsEncrypted"] },
  { name: "tool_calls", model: "ToolCall" },
  { name: "analytics_daily_counts", model: "AnalyticsDailyCount", order: ["day", "metric", "shard"] },
];

/** The tables a tenant has rows in that are not exported, and why (docs and a test read this). */
export const NOT_EXPORTED: Readonly<Partial<Record<Prisma.ModelName, string>>> = {
  IdempotentResponse: "a 24-hour replay cache of POST answers, which may hold a secret shown once",
};

const delegateOf = (db: Db, model: Prisma.ModelName) => (db as unknown as Record<string, Delegate>)[model.charAt(0).toLowerCase() + model.slice(1)];

/** A row as the export writes it: columns by their snake_case names, dates as ISO 8601, decimals and big integers as strings. */
function exportRow(row: Row, omit: readonly string[] = []): Row {
  const out: Row = {};
  for (const [field, value] of Object.entries(row)) {
    if (omit.includes(field)) continue;
    if (field === "user" && value && typeof value === "object") {
      const user = value as { email: string; name: string };
      out.user_email = user.email;
      out.user_name = user.name;
      continue;
    }
    out[columnName(field)] = wireValue(value);
  }
  return out;
}

function wireValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  if (Prisma.Decimal.isDecimal(value)) return (value as Prisma.Decimal).toString();
  return value;
}

/** Keyset pages of one delegate: `where` plus "after the last row" on the `order` fields (ascending). */
async function* pages(delegate: Delegate, where: Row, order: readonly string[], pageSize: number, extra: object = {}): AsyncGenerator<Row[]> {
  let last: Row | null = null;
  for (;;) {
    const after: Row | null = last ? keysetAfter(order, last) : null;
    const rows = await delegate.findMany({
      ...extra,
      where: after ? { AND: [where, after] } : where,
      orderBy: order.map((f) => ({ [f]: "asc" })),
      take: pageSize,
    });
    if (rows.length) yield rows;
    if (rows.length < pageSize) return;
    last = rows[rows.length - 1];
  }
}

/** (a, b, c) > (x, y, z) as Prisma filters: a > x, or a = x and (b, c) > (y, z). */
function keysetAfter(order: readonly string[], last: Row): Row {
  const [first, ...rest] = order;
  if (!rest.length) return { [first]: { gt: last[first] } };
  return { OR: [{ [first]: { gt: last[first] } }, { AND: [{ [first]: last[first] }, keysetAfter(rest, last)] }] };
}

const line = (resource: string, data: unknown) => `${JSON.stringify({ resource, data })}\n`;

/** The tenant's export, line by line (each ends with "\n"); null when the tenant does not exist. */
export async function openTenantExport(tenantId: string, opts: { now?: Date; pageSize?: number } = {}): Promise<AsyncGenerator<string> | null> {
  const db = await getDb();
  const tenant = await db.tenant.findUnique({ where: { id: tenantId } });
  if (!tenant) return null;
  return exportLines(db, tenant, opts.now ?? new Date(), opts.pageSize ?? EXPORT_PAGE_SIZE);
}

async function* exportLines(db: Db, tenant: Row & { id: string }, now: Date, pageSize: number): AsyncGenerator<string> {
  const counts: Record<string, number> = { tenants: 1 };
  yield line("export", { ...EXPORT_FORMAT, tenant_id: tenant.id, exported_at: now.toISOString() });
  yield line("tenants", exportRow(tenant));
  for (const resource of EXPORT_RESOURCES) {
    counts[resource.name] = 0;
    for await (const rows of resourcePages(db, tenant.id, resource, pageSize)) {
      for (const row of rows) {
        counts[resource.name]++;
        yield line(resource.name, exportRow(row, resource.omit));
      }
    }
  }
  yield line("export_end", { counts });
}

async function* resourcePages(db: Db, tenantId: string, resource: Resource, pageSize: number): AsyncGenerator<Row[]> {
  const delegate = delegateOf(db, resource.model);
  const tenantWhere = { [resource.tenantField ?? "tenantId"]: tenantId };
  const extra = resource.include ? { include: resource.include } : {};
  if (!resource.parent) {
    yield* pages(delegate, tenantWhere, resource.order ?? ["createdAt", "id"], pageSize, extra);
    return;
  }
  // A child: pages of the parent's ids (by the parent's tenant index), then the children of each page in keyset pages.
  const parent = delegateOf(db, resource.parent.model);
  for await (const parents of pages(parent, { tenantId }, ["createdAt", "id"], pageSize, { select: { id: true, createdAt: true } })) {
    yield* pages(delegate, { tenantId, [resource.parent.field]: { in: parents.map((p) => p.id) } }, resource.parent.order, pageSize, extra);
  }
}
