// A whole model row through one raw statement: the select list comes from Prisma's generated
// scalar-field enum (every column, under its Prisma field name), timestamps travel as ISO text so
// both drivers answer alike, and `parse` turns them back into Dates. The date fields are listed as a
// record the type system checks for completeness: each Date field of the row, and nothing else.
import { columnName } from "./columns";
import { isoText } from "./resource";

type DateKeys<Row> = { [K in keyof Row]-?: Row[K] extends Date | null ? (Date extends Row[K] ? K : never) : never }[keyof Row];

export function rowSelect<Row>(scalarFields: Record<string, keyof Row & string>, dates: Record<DateKeys<Row>, true>) {
  const dateFields = new Set<string>(Object.keys(dates));
  const fields = Object.values(scalarFields);
  return {
    /** The row's columns over the table (or CTE) aliased `alias`, each named as its Prisma field. */
    select(alias: string): string {
      return fields
        .map((field) => {
          const column = columnName(field);
          const expression = dateFields.has(field) ? isoText(column, alias) : `${alias}.${column}`;
          return `${expression} AS "${field}"`;
        })
        .join(", ");
    },
    /** A row as the statement answered it, with its timestamps as Dates. */
    parse(text: Record<string, unknown>): Row {
      const row: Record<string, unknown> = { ...text };
      for (const field of dateFields) row[field] = row[field] == null ? null : new Date(row[field] as string);
      return row as Row;
    },
  };
}
