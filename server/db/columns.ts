// Raw SQL names a model's columns through these, never by hand. A column is its Prisma field's name
// in snake_case (every @map of prisma/schema.prisma follows that rule; tests/db/
// raw_sql_column_names_come_from_the_prisma_model.test.ts checks it against the migrated tables),
// and a model's fields come from Prisma's generated scalar-field enum: a statement naming a field
// that was renamed or dropped does not compile. Tables likewise: `TABLE.<Model>` is the model's
// table, by the rule every @@map follows (snake_case plural; the same test checks it).
// The browser entry: resource declarations bring this module into browser code, Prisma's runtime must not follow.
import { Prisma } from "./generated/browser";

/** The column of a Prisma field: `toolCallId` -> `tool_call_id`. */
export const columnName = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// better-auth names its own table; no raw statement touches it, but the rule must say so.
const TABLES_OUTSIDE_THE_RULE: Partial<Record<Prisma.ModelName, string>> = { RateLimit: "auth_rate_limits" };

/** A model's table: `WebhookDelivery` -> `webhook_deliveries`, `ApiKey` -> `api_keys`. */
function tableName(model: Prisma.ModelName): string {
  const snake = columnName(model.charAt(0).toLowerCase() + model.slice(1));
  return TABLES_OUTSIDE_THE_RULE[model] ?? (/[^aeiou]y$/.test(snake) ? `${snake.slice(0, -1)}ies` : `${snake}s`);
}

/** Every model's table by model name (`TABLE.WebhookDelivery`): a renamed or dropped model does not compile. */
export const TABLE = Object.fromEntries(Object.values(Prisma.ModelName).map((model) => [model, tableName(model)])) as {
  readonly [M in Prisma.ModelName]: string;
};

/** A model's columns by field name, from its scalar-field enum (`Prisma.ToolCallScalarFieldEnum`). */
export function modelColumns<const Fields extends Record<string, string>>(scalarFields: Fields): { readonly [F in keyof Fields]: string } {
  return Object.fromEntries(Object.keys(scalarFields).map((field) => [field, columnName(field)])) as { [F in keyof Fields]: string };
}

/**
 * A whole row written by one raw statement: `columns` is every column of the model (an INSERT's
 * column list, and the same list selected from the record), and `record(row)` the row as one JSON
 * parameter keyed by column, which `jsonb_populate_record(NULL::<table>, $n::jsonb)` turns into a
 * record of the table (each value typed by its column; Dates travel as ISO text). `row` is the
 * Prisma row type, so a column the model gains is a compile error until the writer gives it.
 */
export function rowInsert<Row>(scalarFields: Record<string, keyof Row & string>) {
  const columns = Object.values(scalarFields).map((field) => [field, columnName(field)] as const);
  return {
    columns: columns.map(([, column]) => column).join(", "),
    record(row: Row): string {
      const record: Record<string, unknown> = {};
      for (const [field, column] of columns) record[column] = row[field];
      return JSON.stringify(record);
    },
  };
}
