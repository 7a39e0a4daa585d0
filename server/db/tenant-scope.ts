// Structural tenant isolation: every query made through `scopeToTenant(db, tenantId)` is filtered
// by (and every row it creates is stamped with) that tenant, so a call site cannot forget the
// `where`. Another tenant's row is then indistinguishable from a missing one.
import type { Prisma, PrismaClient } from "./generated/client";
import type { SqlRunner, Statement, TenantSql } from "../lib/sql";
export type { TenantSql };

/**
 * Models whose rows the scope filters and stamps by their `tenantId`.
 * tests/db/every_tenant_model_is_scoped_or_left_out_with_a_reason.test.ts reads every model of the
 * Prisma schema: one with a tenant column (`tenantId`, `organizationId`) must be here or below.
 */
export const TENANT_MODELS: ReadonlySet<Prisma.ModelName> = new Set<Prisma.ModelName>([
  "ApiKey",
  "IdempotentResponse",
  "AuditLog",
  "Offering",
  "Appointment",
  "Conversation",
  "Message",
  "Lead",
  "Event",
  "WebhookSubscription",
  "WebhookDelivery",
  "WebhookAttempt",
  "Notification",
  "CrmConnection",
  "ChannelConnection",
  "Call",
  "CsatResponse",
  "ToolCall",
  // Written by triggers and read by the rollup's raw SQL (which names the tenant itself) today; a
  // Prisma query through a tenant's client is filtered like any other.
  "AnalyticsDailyCount",
]);

/** Models with a tenant column that the scope leaves alone on purpose, and why. */
export const UNSCOPED_TENANT_MODELS: Readonly<Partial<Record<Prisma.ModelName, string>>> = {
  Member:
    "better-auth's membership (column organizationId) joins a user to tenants: sign-in picks the user's first tenant from them and the account page counts them, across all the user's tenants; the dashboard's member services filter by organizationId themselves",
  Invitation:
    "better-auth's invitation (column organizationId): the invitation page reads one by its unguessable id before the visitor belongs to any tenant; the dashboard's invitation services filter by organizationId themselves",
};

const FILTERED = new Set(["findMany", "findFirst", "findFirstOrThrow", "count", "aggregate", "groupBy", "updateMany", "updateManyAndReturn", "deleteMany"]);
const UNIQUE = new Set(["findUnique", "findUniqueOrThrow", "update", "delete"]);

type AnyArgs = Record<string, any>;

function scopeArgs(operation: string, args: AnyArgs, tenantId: string): AnyArgs {
  if (FILTERED.has(operation)) return { ...args, where: args.where ? { AND: [args.where, { tenantId }] } : { tenantId } };
  if (UNIQUE.has(operation)) return { ...args, where: { ...args.where, tenantId } };
  if (operation === "create") return { ...args, data: { ...args.data, tenantId } };
  if (operation === "createMany" || operation === "createManyAndReturn") {
    const rows = Array.isArray(args.data) ? args.data : [args.data];
    return { ...args, data: rows.map((row: AnyArgs) => ({ ...row, tenantId })) };
  }
  if (operation === "upsert") {
    return { ...args, where: { ...args.where, tenantId }, create: { ...args.create, tenantId } };
  }
  throw new Error(`tenant scope: unsupported operation ${operation}`);
}

function extend(db: PrismaClient, tenantId: string) {
  return db.$extends({
    name: "tenant-scope",
    // The scoped client (and each of its transactions) carries its tenant, so a service takes one
    // argument for both: `db.tenantId` where a raw statement or a log needs the id.
    client: { tenantId },
    query: {
      $allModels: {
        async $allOperations({ model, operation, args, query }) {
          if (!TENANT_MODELS.has(model as Prisma.ModelName)) return query(args);
          return query(scopeArgs(operation, (args ?? {}) as AnyArgs, tenantId) as any);
        },
      },
    },
  });
}

export type TenantDb = ReturnType<typeof extend>;
/** The transaction client of a tenant-scoped database. */
export type TenantTx = Parameters<Parameters<TenantDb["$transaction"]>[0]>[0];

// Extended clients are cheap to keep and not free to build: reuse one per tenant.
const cache = new WeakMap<PrismaClient, Map<string, TenantDb>>();
const MAX_CACHED_TENANTS = 10_000;

export function scopeToTenant(db: PrismaClient, tenantId: string): TenantDb {
  let perDb = cache.get(db);
  if (!perDb) cache.set(db, (perDb = new Map()));
  let scoped = perDb.get(tenantId);
  if (!scoped) {
    if (perDb.size >= MAX_CACHED_TENANTS) perDb.clear();
    scoped = extend(db, tenantId);
    perDb.set(tenantId, scoped);
  }
  return scoped;
}

// The same for statement runners (every tenant request makes one, a booking two): one per runner and tenant.
const sqlCache = new WeakMap<SqlRunner, Map<string, TenantSql>>();

export function scopeSqlToTenant(sql: SqlRunner, tenantId: string): TenantSql {
  let perRunner = sqlCache.get(sql);
  if (!perRunner) sqlCache.set(sql, (perRunner = new Map()));
  let scoped = perRunner.get(tenantId);
  if (!scoped) {
    if (perRunner.size >= MAX_CACHED_TENANTS) perRunner.clear();
    scoped = Object.assign(<Row>(statement: Statement, values: unknown[]) => sql<Row>(statement, [tenantId, ...values]), { tenantId });
    perRunner.set(tenantId, scoped);
  }
  return scoped;
}
