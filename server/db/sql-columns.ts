// Columns for Prisma's tagged raw SQL ($queryRaw`…`, Prisma.sql`…`), where an interpolated string
// would be bound as a parameter: each column of `modelColumns` as a raw fragment, written into the
// statement's text. Built once per model at module load. Apart from columns.ts because it needs
// Prisma's runtime, which columns.ts (imported through resource declarations by browser code) must not.
import { modelColumns, TABLE } from "./columns";
import { Prisma } from "./generated/client";

/** A model's columns by field name as SQL fragments (`${CONVERSATION.tenantId}` in a tagged template). */
export function modelColumnsSql<const Fields extends Record<string, string>>(scalarFields: Fields): { readonly [F in keyof Fields]: Prisma.Sql } {
  const columns = Object.entries(modelColumns(scalarFields)).map(([field, column]) => [field, Prisma.raw(column)]);
  return Object.fromEntries(columns) as { [F in keyof Fields]: Prisma.Sql };
}

/** Every model's table as an SQL fragment (`${TABLE_SQL.Conversation}` in a tagged template). */
export const TABLE_SQL = Object.fromEntries(Object.entries(TABLE).map(([model, table]) => [model, Prisma.raw(table)])) as {
  readonly [M in keyof typeof TABLE]: Prisma.Sql;
};
