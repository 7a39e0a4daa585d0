// Raw SQL names columns through server/db/columns.ts: a column is its Prisma field in snake_case,
// and a model's fields are its generated scalar-field enum. This proves the rule holds for every
// model against the migrated tables (so an INSERT listing a model's columns lists its table's
// columns, all of them), and that a field the model does not have, or a row missing one, does not
// compile.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { columnName, modelColumns, rowInsert, TABLE } from "../../server/db/columns";
import { Prisma } from "../../server/db/generated/client";

type ToolCallRow = Prisma.ToolCallGetPayload<object>;

const scalarFieldEnums = Object.entries(Prisma).filter(([name]) => name.endsWith("ScalarFieldEnum")) as [string, Record<string, string>][];

describe("raw SQL column names come from the Prisma model", () => {
  it("every_model_s_fields_in_snake_case_are_exactly_the_columns_of_one_table", async () => {
    const sql = (await openDatabase()).writes;
    const rows = await sql<{ table_name: string; column_name: string }>(
      {
        // Generated columns (offerings.search_vector) are PostgreSQL's own, outside the model, never written.
        text: `SELECT table_name, column_name FROM information_schema.columns
               WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations' AND is_generated = 'NEVER'`,
      },
      [],
    );
    const tables = new Map<string, string[]>();
    for (const r of rows) tables.set(r.table_name, [...(tables.get(r.table_name) ?? []), r.column_name]);
    const sorted = (names: string[]) => [...names].sort().join(",");
    const byColumns = new Map([...tables].map(([table, columns]) => [sorted(columns), table]));

    expect(scalarFieldEnums.length).toBe(tables.size);
    const unmatched = scalarFieldEnums.filter(([, fields]) => !byColumns.has(sorted(Object.keys(fields).map(columnName)))).map(([name]) => name);
    expect(unmatched).toEqual([]);
    expect(byColumns.get(sorted(Object.keys(Prisma.AppointmentScalarFieldEnum).map(columnName)))).toBe("appointments");
    // And each model's TABLE entry is the table holding exactly its columns.
    const tableOfModel = scalarFieldEnums.map(([name, fields]) => [
      name.replace(/ScalarFieldEnum$/, ""),
      byColumns.get(sorted(Object.keys(fields).map(columnName))),
    ]);
    expect(Object.fromEntries(tableOfModel)).toEqual({ ...TABLE });
    expect([TABLE.WebhookDelivery, TABLE.ApiKey, TABLE.RateLimit]).toEqual(["webhook_deliveries", "api_keys", "auth_rate_limits"]);
  });

  it("names_each_field_s_column_and_lists_a_whole_row_keyed_by_column", () => {
    const toolCall = modelColumns(Prisma.ToolCallScalarFieldEnum);
    expect([toolCall.toolCallId, toolCall.tenantId, toolCall.result]).toEqual(["tool_call_id", "tenant_id", "result"]);
    const insert = rowInsert<ToolCallRow>(Prisma.ToolCallScalarFieldEnum);
    expect(insert.columns).toBe("id, tenant_id, tool, tool_call_id, result, created_at");
    const row = { id: "i", tenantId: "t", tool: "book", toolCallId: "c", result: null, createdAt: new Date("2026-11-24T01:00:00.000Z") };
    expect(JSON.parse(insert.record(row))).toEqual({
      id: "i",
      tenant_id: "t",
      tool: "book",
      tool_call_id: "c",
      result: null,
      created_at: "2026-11-24T01:00:00.000Z",
    });
  });

  it("a_field_the_model_lacks_or_a_row_missing_a_column_does_not_compile", () => {
    const toolCall = modelColumns(Prisma.ToolCallScalarFieldEnum);
    // @ts-expect-error `callId` is not a field of ToolCall
    expect(toolCall.callId).toBeUndefined();
    const insert = rowInsert<ToolCallRow>(Prisma.ToolCallScalarFieldEnum);
    // @ts-expect-error `createdAt` is missing: every column of the row must be given
    expect(() => insert.record({ id: "i", tenantId: "t", tool: "book", toolCallId: "c", result: null })).not.toThrow();
    // @ts-expect-error the scalar-field enum of another model does not fit this row type
    rowInsert<ToolCallRow>(Prisma.AppointmentScalarFieldEnum);
  });
});
