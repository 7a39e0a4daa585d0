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

const MAX_CACHED_TENANTS = 10_000;

/**
 * `make(base, tenantId)` memoized per base object and tenant, up to MAX_CACHED_TENANTS per base
 * (then the memo starts again): what it makes is cheap to keep and not free to build.
 */
function memoPerTenant<Base extends object, Scoped>(make: (base: Base, tenantId: string) => Scoped): (base: Base, tenantId: string) => Scoped {
  const memo = new WeakMap<Base, Map<string, Scoped>>();
  return (base, tenantId) => {
    let perBase = memo.get(base);
    if (!perBase) memo.set(base, (perBase = new Map()));
    let scoped = perBase.get(tenantId);
    if (scoped === undefined) {
      if (perBase.size >= MAX_CACHED_TENANTS) perBase.clear();
      scoped = make(base, tenantId);
      perBase.set(tenantId, scoped);
    }
    return scoped;
  };
}

/** The database as one tenant sees it (one extended client per client and tenant). */
export const scopeToTenant: (db: PrismaClient, tenantId: string) => TenantDb = memoPerTenant(extend);

/** A statement runner whose statements get the tenant's id as $1 (every tenant request makes one, a booking two). */
export const scopeSqlToTenant: (sql: SqlRunner, tenantId: string) => TenantSql = memoPerTenant((sql: SqlRunner, tenantId) =>
  Object.assign(<Row>(statement: Statement, values: unknown[]) => sql<Row>(statement, [tenantId, ...values]), { tenantId }),
);
