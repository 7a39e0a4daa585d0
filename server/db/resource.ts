// One declaration per resource: for each wire field, the model column it comes from (a key of the
// Prisma row type, so a typo or a dropped column does not compile), its zod wire type, and its kind
// (how a row value becomes wire). From that one table come the wire schema (OpenAPI included), the
// row -> wire mapping, the SQL select list of prepared statements (PostgreSQL formats the value the
// same way) and the patch -> column mapping of creates and updates.
import { z } from "zod";
import { dateFromWire, dateToWire, decimalToWire } from "../lib/wire";
import { columnName } from "./columns";

/**
 * How a column's value reaches the wire. `value`: as stored; `json`: an object, `{}` when absent;
 * `timestamp`: ISO 8601 UTC with milliseconds; `date`: YYYY-MM-DD; `decimal`: plain notation, no
 * trailing zeros; `computed`: derived by a function of the row (no column, no SQL).
 */
type Kind = "value" | "json" | "timestamp" | "date" | "decimal" | "computed";

export type Field<Row, W extends z.ZodType = z.ZodType, K extends Kind = Kind, C = keyof Row, P extends boolean = boolean> = {
  kind: K;
  column: C;
  wire: W;
  /** Whether a create or PATCH body sets the column from this wire field (`patchToColumns`). */
  patch: P;
  toWire: (row: Row) => unknown;
};

type AnyField = Field<never, z.ZodType, Kind, unknown, boolean>;
type Fields = Record<string, AnyField>;
type Options<P extends boolean> = { patch?: P };

/**
 * What the wire type of a column of this kind must output: a `value` the column's own type (an enum
 * of a string column, say); a `json` an object; the formatted kinds a string, or null when the
 * column may be null.
 */
type WireValue<K extends Kind, V> = K extends "value" ? V : K extends "json" ? Record<string, unknown> : string | (null extends V ? null : never);

/**
 * The field constructors of one model's row type: `column` must be one of its keys, and the wire
 * type must fit what that column holds (a number wire type over a text column does not compile).
 */
export function resourceFields<Row>() {
  const field =
    <K extends Exclude<Kind, "computed">>(kind: K, format: (value: unknown) => unknown) =>
    <C extends keyof Row & string, W extends z.ZodType<WireValue<K, Row[C]>>, P extends boolean = false>(
      column: C,
      wire: W,
      options?: Options<P>,
    ): Field<Row, W, K, C, P> => ({
      kind,
      column,
      wire,
      patch: (options?.patch ?? false) as P,
      toWire: (row) => format(row[column]),
    });
  return {
    value: field("value", (v) => v),
    json: field("json", (v) => v ?? {}),
    timestamp: field("timestamp", (v) => (v ? (v as Date).toISOString() : null)),
    date: field("date", (v) => dateToWire(v as Date | null)),
    decimal: field("decimal", (v) => (v === null ? null : decimalToWire(v as { toFixed(): string }))),
    computed: <W extends z.ZodType>(wire: W, toWire: (row: Row) => z.output<W>): Field<Row, W, "computed", null, false> => ({
      kind: "computed",
      column: null,
      wire,
      patch: false,
      toWire,
    }),
    /** The resource of these fields; `id` names its schema in the OpenAPI document (none: inlined where used). */
    define: <F extends Record<string, Field<Row, z.ZodType, Kind, unknown, boolean>>>(id: string | null, fields: F) => defineResource<Row, F>(id, fields),
  };
}

type Wire<F extends Fields> = { [W in keyof F]: z.output<F[W]["wire"]> };
type PatchKey<F extends Fields> = { [W in keyof F]: F[W]["patch"] extends true ? W : never }[keyof F];
/** A wire value as its column takes it: dates and timestamps become `Date`, null stays null. */
type ColumnValue<Fd extends AnyField, V> = Fd["kind"] extends "date" | "timestamp" ? Date | Extract<V, null | undefined> : V;
/** The columns a body sets: one per patchable wire field it has, optional where the body's field is. */
type Columns<F extends Fields, I> = {
  [W in keyof I as W extends PatchKey<F> ? F[W]["column"] & string : never]: W extends PatchKey<F> ? ColumnValue<F[W], I[W]> : never;
};

/** A timestamptz column as ISO 8601 UTC with milliseconds, in SQL (what `toISOString` gives). */
export const isoText = (column: string, alias = "t") => `to_char(${alias}.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The SQL of one field over the table aliased `t`, yielding exactly what `toWire` yields. */
function selectOf(wire: string, field: AnyField): string {
  if (field.kind === "computed") throw new Error(`resource field '${wire}' is computed: it has no SQL`);
  const column = columnName(field.column as string);
  const expression = {
    value: `t.${column}`,
    json: `COALESCE(t.${column}, '{}'::jsonb)`,
    timestamp: isoText(column),
    date: `to_char(t.${column}, 'YYYY-MM-DD')`,
    decimal: `trim_scale(t.${column})::text`,
  }[field.kind];
  return expression === `t.${wire}` ? expression : `${expression} AS ${wire}`;
}

function toColumnValue(field: AnyField, value: unknown): unknown {
  if (value === null) return null;
  if (field.kind === "date") return dateFromWire(value as string);
  if (field.kind === "timestamp") return new Date(value as string);
  return value;
}

function defineResource<Row, F extends Record<string, Field<Row, z.ZodType, Kind, unknown, boolean>>>(id: string | null, fields: F) {
  const entries = Object.entries(fields);
  const shape = Object.fromEntries(entries.map(([wire, field]) => [wire, field.wire])) as { [W in keyof F]: F[W]["wire"] };
  const object = z.object(shape);
  let select: string | undefined;
  return {
    fields,
    /** The wire schema (documented in OpenAPI under `id`). */
    schema: id === null ? object : object.meta({ id }),
    /** A row as its wire shape. */
    toWire(row: Row): Wire<F> {
      const wire: Record<string, unknown> = {};
      for (const [name, field] of entries) wire[name] = field.toWire(row);
      return wire as Wire<F>;
    },
    /** The wire fields as an SQL select list over the table aliased `t` (every field needs a column). */
    get sqlSelect(): string {
      select ??= entries.map(([wire, field]) => selectOf(wire, field)).join(", ");
      return select;
    },
    /**
     * The columns a create or PATCH body sets: each patchable wire field present (`undefined` is
     * not given; `null` clears), converted to what its column holds.
     */
    patchToColumns<I extends { [W in PatchKey<F>]?: unknown }>(input: I): Columns<F, I> {
      const data: Record<string, unknown> = {};
      for (const [wire, field] of entries) {
        const value = (input as Record<string, unknown>)[wire];
        if (field.patch && value !== undefined) data[field.column as string] = toColumnValue(field, value);
      }
      return data as Columns<F, I>;
    },
  };
}
