// The shape of raw SQL as the database runs it (server/db/database.ts; pagination builds it).
/**
 * A prepared SQL statement: PostgreSQL parses and plans it once per connection (the driver keys it
 * by its text). Hot read paths use these instead of the Prisma client, whose per-query work costs
 * more CPU than the query itself (see docs/architecture.md, "Hot paths").
 */
// biome-ignore lint/suspicious/noExplicitAny: an untyped statement names its rows at the call, as before typed statements
export type Statement<Row = any> = {
  readonly text: string;
  /** The type of its rows, for the compiler only (never set). */
  readonly row?: Row;
};

/** A statement whose rows are `Row`: runners and `queryOn` answer `Row[]` for it without a type at the call. */
export const statement = <Row>(text: string): Statement<Row> => ({ text });
/**
 * Runs a statement; rows come back with the column names of the SQL. Only json/jsonb, arrays,
 * booleans, integers and text are converted (the SQL formats timestamps, dates and numerics as
 * text), so both drivers return the same values.
 */
export type SqlRunner = <Row>(statement: Statement<Row>, values: unknown[]) => Promise<Row[]>;

/**
 * A tenant's prepared statements. The tenant id is always `$1` of every statement (the caller's
 * values follow from `$2`), so, as with `scopeToTenant`, a call site cannot run a query for
 * another tenant: a statement only has to say `tenant_id = $1`. Like the tenant-scoped client, it
 * carries its tenant (`sql.tenantId`), for a row a statement writes whole.
 */
export type TenantSql = (<Row>(statement: Statement<Row>, values: unknown[]) => Promise<Row[]>) & { readonly tenantId: string };
