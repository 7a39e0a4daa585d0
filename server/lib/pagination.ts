// Keyset pagination for every list: `limit` (default 20, capped at 100) and `cursor` (the id of the
// previous page's last row). The cursor row's sort value bounds the query twice — a row-value
// style OR plus a redundant range bound — so PostgreSQL uses the composite index and a page's cost
// does not grow with its depth.
import { badRequest } from "./errors";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, markSqlRowEnvelope } from "./list-envelope";
import { log } from "./log";
import type { Statement, TenantSql } from "./sql";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const invalidCursor = () => badRequest("invalid field 'cursor': not a cursor of this list", "cursor");

type Where = Record<string, unknown>;

export type KeysetOptions<Row extends { id: string }, K extends string> = {
  limit?: number;
  cursor?: string;
  sortKey: K;
  direction: "asc" | "desc";
  /** The cursor row's sort value, or null when it is not a row of this list. */
  loadCursor: (id: string) => Promise<Record<K, unknown> | null>;
  findMany: (args: { where: Where; orderBy: Record<string, "asc" | "desc">[]; take: number }) => Promise<Row[]>;
};

export async function keysetPage<Row extends { id: string }, K extends string>(opts: KeysetOptions<Row, K>) {
  const limit = pageSize(opts.limit);
  const { sortKey: key, direction } = opts;
  let where: Where = {};
  if (opts.cursor !== undefined) {
    const cursorId = cursorIdOf(opts.cursor);
    const cursorRow = await opts.loadCursor(cursorId);
    if (!cursorRow) throw invalidCursor();
    const value = cursorRow[key];
    const beyond = direction === "desc" ? "lt" : "gt";
    const bound = direction === "desc" ? "lte" : "gte";
    where = {
      [key]: { [bound]: value },
      OR: [{ [key]: { [beyond]: value } }, { [key]: value, id: { [beyond]: cursorId } }],
    };
  }
  const rows = await opts.findMany({ where, orderBy: [{ [key]: direction }, { id: direction }], take: limit + 1 });
  return pageOf(rows, limit);
}

const pageSize = (limit: number | undefined) => Math.min(limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);

function cursorIdOf(cursor: string): string {
  if (!UUID.test(cursor)) throw invalidCursor();
  return cursor.toLowerCase();
}

/**
 * A list read with prepared statements (the hot lists: see docs/architecture.md): rows come back
 * in wire shape, and any page, first or deep, is ONE query. The page after a cursor compares
 * (sort, id) as a row value against the cursor row, read by a subquery: an index condition on
 * (tenant_id, sort DESC, id DESC), so a deep page costs what the first one does.
 */
export type SqlList = {
  /** $1 tenant, $2 take. */
  first: Statement;
  /** $1 tenant, $2 take, $3 cursor id. */
  after: Statement;
  /** $1 tenant, $2 cursor id: whether the cursor is a row of this list (asked only for an empty page). */
  cursorExists: Statement;
};

/** A tenant table's columns by field name (its model's `modelColumns`: server/db/columns.ts). */
type TenantColumns = { readonly id: string; readonly tenantId: string };

/**
 * Builds the statements of a list. `columns` are the table's model columns, `sortField` the field
 * it is sorted by; `select` lists the wire fields over the table aliased `t` (a resource's
 * `sqlSelect`: server/db/resource.ts); `where` narrows the list (never the cursor row: a row
 * soft-deleted after it was handed out as a cursor still continues the list).
 */
export function sqlList<C extends TenantColumns>(spec: {
  table: string;
  columns: C;
  select: string;
  sortField: keyof C & string;
  direction: "asc" | "desc";
  where?: string;
}): SqlList {
  const { id, tenantId } = spec.columns;
  const sort = spec.columns[spec.sortField];
  const dir = spec.direction === "desc" ? "DESC" : "ASC";
  const beyond = spec.direction === "desc" ? "<" : ">";
  const filter = spec.where ? ` AND ${spec.where}` : "";
  const head = `SELECT ${spec.select} FROM ${spec.table} t WHERE t.${tenantId} = $1::uuid${filter}`;
  const order = `ORDER BY t.${sort} ${dir}, t.${id} ${dir} LIMIT $2`;
  return {
    first: { text: `${head} ${order}` },
    after: {
      text: `${head} AND (t.${sort}, t.${id}) ${beyond} (SELECT c.${sort}, c.${id} FROM ${spec.table} c WHERE c.${tenantId} = $1::uuid AND c.${id} = $3::uuid) ${order}`,
    },
    cursorExists: { text: `SELECT 1 FROM ${spec.table} c WHERE c.${tenantId} = $1::uuid AND c.${id} = $2::uuid` },
  };
}

export async function sqlKeysetPage<Row extends { id: string }>(sql: TenantSql, list: SqlList, input: { limit?: number; cursor?: string }) {
  const limit = pageSize(input.limit);
  let rows: Row[];
  if (input.cursor === undefined) rows = await sql<Row>(list.first, [limit + 1]);
  else {
    const cursorId = cursorIdOf(input.cursor);
    rows = await sql<Row>(list.after, [limit + 1, cursorId]);
    if (rows.length === 0 && (await sql(list.cursorExists, [cursorId])).length === 0) throw invalidCursor();
  }
  const page = pageOf(rows, limit);
  sqlPages.set(page, list);
  return page;
}

/** Pages read by a prepared list: see `listEnvelope` (list-envelope.ts). */
const sqlPages = new WeakMap<object, SqlList>();

const warnColumnsDiffer = (columns: string[], fields: string[]) =>
  log.warn({ columns: columns.join(","), fields: fields.join(",") }, "list columns differ from the wire schema: parsed row by row");

function pageOf<Row extends { id: string }>(rows: Row[], limit: number) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  return { rows: page, hasMore, nextCursor: hasMore ? page[page.length - 1].id : null };
}

export function toListEnvelope<Row extends { id: string }, W>(page: { rows: Row[]; hasMore: boolean; nextCursor: string | null }, toWire: (row: Row) => W) {
  const envelope = { data: page.rows.map(toWire), next_cursor: page.nextCursor, has_more: page.hasMore };
  // Only rows passed through untouched keep their SQL's checked shape.
  const list = sqlPages.get(page);
  if (list && envelope.data.every((wire, i) => wire === (page.rows[i] as unknown))) markSqlRowEnvelope(envelope, { list, columnsDiffer: warnColumnsDiffer });
  return envelope;
}
