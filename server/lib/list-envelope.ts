// A list's wire schemas: the `limit`/`cursor` query and the `{ data, next_cursor, has_more }`
// envelope. The *.types.ts files build their schemas from these and the dashboard's forms import
// those files, so this module stays free of server-only code (no log, no settings): a page of rows
// read by SQL is marked by pagination.ts, which hands over how to report a mismatch.
import { z } from "zod";

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
  const checked = new WeakSet<object>();
  const refused = new WeakSet<object>();
  const ofCheckedShape = (value: unknown) => {
    const rows = typeof value === "object" && value !== null ? sqlRowEnvelopes.get(value) : undefined;
    if (!rows) return false;
    const { list } = rows;
    if (refused.has(list)) return false;
    if (checked.has(list)) return true;
    const first = (value as { data: object[] }).data[0];
    if (!first) return true; // no row, nothing to carry: the check waits for a page with rows
    const columns = Object.keys(first);
    if (columns.length === fields.size && columns.every((c) => fields.has(c))) {
      checked.add(list);
      return true;
    }
    refused.add(list);
    rows.columnsDiffer(columns, [...fields]);
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

/** What pagination.ts tells about an envelope answering a prepared list's rows as they came. */
type SqlRows = { list: object; columnsDiffer: (columns: string[], fields: string[]) => void };
const sqlRowEnvelopes = new WeakMap<object, SqlRows>();

/**
 * Marks `envelope` as carrying the rows of the prepared list `list` untouched: its output check
 * (above) then runs once per list. `columnsDiffer` hears of a list whose columns are not the schema's.
 */
export function markSqlRowEnvelope(envelope: object, rows: SqlRows): void {
  sqlRowEnvelopes.set(envelope, rows);
}
