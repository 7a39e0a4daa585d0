// Keyset pagination for every list: `limit` (default 20, capped at 100) and `cursor` (the id of the
// previous page's last row). The cursor row's sort value bounds the query twice — a row-value
// style OR plus a redundant range bound — so PostgreSQL uses the composite index and a page's cost
// does not grow with its depth.
import { z } from "zod";
import { badRequest } from "../errors";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const pageQuery = {
  limit: z
    .number({ error: "must be an integer from 1 to 100" })
    .int({ message: "must be an integer from 1 to 100" })
    .min(1, { message: "must be an integer from 1 to 100" })
    .optional()
    .describe("Page size, 1 to 100 (larger values are capped at 100). Default 20."),
  cursor: z
    .string()
    .optional()
    .describe("The `next_cursor` of the previous page; omit for the first page."),
};

export const listEnvelope = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().describe("Pass as `cursor` to get the next page; null on the last page."),
      has_more: z.boolean(),
    })
    .meta({ id: name });

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
  /**
   * Optional: the page after a cursor in ONE query (the cursor row's sort key read by a subquery),
   * for lists whose deep pages must cost what the first one does. An empty result is checked
   * against `loadCursor` so an unknown cursor is still a 400.
   */
  findPageAfter?: (cursorId: string, take: number) => Promise<Row[]>;
};

export async function keysetPage<Row extends { id: string }, K extends string>(opts: KeysetOptions<Row, K>) {
  const limit = Math.min(opts.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const { sortKey: key, direction } = opts;
  let where: Where = {};
  if (opts.cursor !== undefined && opts.findPageAfter) {
    if (!UUID.test(opts.cursor)) throw invalidCursor();
    const cursorId = opts.cursor.toLowerCase();
    const rows = await opts.findPageAfter(cursorId, limit + 1);
    if (rows.length === 0 && !(await opts.loadCursor(cursorId))) throw invalidCursor();
    return pageOf(rows, limit);
  }
  if (opts.cursor !== undefined) {
    if (!UUID.test(opts.cursor)) throw invalidCursor();
    const cursorRow = await opts.loadCursor(opts.cursor.toLowerCase());
    if (!cursorRow) throw invalidCursor();
    const value = cursorRow[key];
    const beyond = direction === "desc" ? "lt" : "gt";
    const bound = direction === "desc" ? "lte" : "gte";
    where = {
      [key]: { [bound]: value },
      OR: [{ [key]: { [beyond]: value } }, { [key]: value, id: { [beyond]: opts.cursor.toLowerCase() } }],
    };
  }
  const rows = await opts.findMany({ where, orderBy: [{ [key]: direction }, { id: direction }], take: limit + 1 });
  return pageOf(rows, limit);
}

function pageOf<Row extends { id: string }>(rows: Row[], limit: number) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  return { rows: page, hasMore, nextCursor: hasMore ? page[page.length - 1].id : null };
}

export const toListEnvelope = <Row extends { id: string }, W>(
  page: { rows: Row[]; hasMore: boolean; nextCursor: string | null },
  toWire: (row: Row) => W,
) => ({ data: page.rows.map(toWire), next_cursor: page.nextCursor, has_more: page.hasMore });
