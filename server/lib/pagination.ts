// Keyset pagination for every list: `limit` (default 20, capped at 100) and `cursor` (the id of the
// previous page's last row). The cursor row's sort value bounds the query twice — a row-value
// style OR plus a redundant range bound — so PostgreSQL uses the composite index and a page's cost
// does not grow with its depth.
import { z } from "zod";
import { badRequest } from "./errors";
import { log } from "./log";
import type { Statement, TenantSql } from "./sql";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const pageQuery = {
  limit: z
    .number({ error: "must be an integer from 1 to 100" })
    .int({ message: "must be an integer from 1 to 100" })
    .min(1, { message: "must be an integer from 1 to 100" })
    .optional()
    .describe("Page size, 1 to 100 (larger values are capped at 100). Default 20."),
  cursor: z.string().optional().describe("The `next_cursor` of the previous page; omit for the first page."),
};

export const listEnvelope = <T extends z.ZodType>(item: T, name: string) =>
  skipRowsOfCheckedShapes(
    z
      .object({
        data: z.array(item),
        next_cursor: z.string().nullable().describe("Pass as `cursor` to get the next page; null on the last page."),
        has_more: z.boolean(),
      })
      .meta({ id: name }),
    item,
  );

/**
 * The output check of a list, once per SQL shape rather than per row per request. A page of a
 * prepared list (`sqlKeysetPage`, answered as its rows came) has the columns its SQL names, the
 * same in every row: the first such page checks that they are exactly the item schema's fields,
 * and later pages of that list skip the per-row parse (about an eighth of the hottest list's CPU).
 * Any other value, or a list whose columns differ, gets the full parse, which strips what the
 * schema does not name: an undeclared column can never reach the wire.
 */
function skipRowsOfCheckedShapes<E extends z.ZodType>(envelope: E, item: z.ZodType): E {
  if (!(item instanceof z.ZodObject)) return envelope;
  const fields = new Set(Object.keys(item.shape));
  const checked = new WeakSet<SqlList>();
  const refused = new WeakSet<SqlList>();
  const ofCheckedShape = (value: unknown) => {
    const list = typeof value === "object" && value !== null ? sqlEnvelopes.get(value) : undefined;
    if (!list || refused.has(list)) return false;
    if (checked.has(list)) return true;
    const first = (value as { data: object[] }).data[0];
    if (!first) return true; // no row, nothing to carry: the check waits for a page with rows
    const columns = Object.keys(first);
    if (columns.length === fields.size && columns.every((c) => fields.has(c))) {
      checked.add(list);
      return true;
    }
    refused.add(list);
    log.warn("list columns differ from the wire schema: parsed row by row", { columns: columns.join(","), fields: [...fields].join(",") });
    return false;
  };
  // tRPC validates output with parseAsync (zod's slower path); both entries go through the check.
  const parseAsync = envelope.parseAsync.bind(envelope);
  const parse = envelope.parse.bind(envelope);
  type Params = z.core.ParseContext<z.core.$ZodIssue>;
  envelope.parseAsync = async (value: unknown, params?: Params) => (ofCheckedShape(value) ? (value as z.output<E>) : parseAsync(value, params));
  envelope.parse = (value: unknown, params?: Params) => (ofCheckedShape(value) ? (value as z.output<E>) : parse(value, params));
  return envelope;
}

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

/** Pages read by a prepared list, and envelopes answering such a page's rows as they came: see `listEnvelope`. */
const sqlPages = new WeakMap<object, SqlList>();
const sqlEnvelopes = new WeakMap<object, SqlList>();

function pageOf<Row extends { id: string }>(rows: Row[], limit: number) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  return { rows: page, hasMore, nextCursor: hasMore ? page[page.length - 1].id : null };
}

export function toListEnvelope<Row extends { id: string }, W>(page: { rows: Row[]; hasMore: boolean; nextCursor: string | null }, toWire: (row: Row) => W) {
  const envelope = { data: page.rows.map(toWire), next_cursor: page.nextCursor, has_more: page.hasMore };
  // Only rows passed through untouched keep their SQL's checked shape.
  const list = sqlPages.get(page);
  if (list && envelope.data.every((wire, i) => wire === (page.rows[i] as unknown))) sqlEnvelopes.set(envelope, list);
  return envelope;
}
