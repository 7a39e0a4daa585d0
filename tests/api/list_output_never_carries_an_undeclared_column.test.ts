// A prepared list's rows skip the per-row output parse once their SQL's columns were checked
// against the wire schema (server/lib/list-envelope.ts, `listEnvelope`): these prove that a column the
// schema does not name still never reaches the wire, and that the check does not skip what it must not.
import { beforeAll, describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { openDatabase } from "../../server/db/database";
import { modelColumns } from "../../server/db/columns";
import { Prisma } from "../../server/db/generated/client";
import { scopeSqlToTenant } from "../../server/db/tenant-scope";
import { sqlKeysetPage, sqlList, toListEnvelope } from "../../server/lib/pagination";
import { OFFERING_WIRE_SELECT } from "../../server/offerings/offerings.service";
import { offeringListSchema, offeringSchema } from "../../server/offerings/offerings.types";

let key: string;
let tenantId: string;
const WIRE_FIELDS = Object.keys(offeringSchema.shape).sort();

const OFFERING = modelColumns(Prisma.OfferingScalarFieldEnum);
const listWith = (select: string) =>
  sqlList({ table: "offerings", columns: OFFERING, select, sortField: "createdAt", direction: "desc", where: `t.${OFFERING.deletedAt} IS NULL` });

async function pageOf(list: ReturnType<typeof listWith>) {
  const sql = scopeSqlToTenant((await openDatabase()).writes, tenantId);
  return toListEnvelope(await sqlKeysetPage<{ id: string }>(sql, list, { limit: 5 }), (row) => row);
}

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
  for (const title of ["One", "Two", "Three"]) {
    const created = await call("POST", "/offerings", { key, body: { title, price: "10.50", price_currency: "USD" } });
    expect(created.status).toBe(201);
  }
});

describe("list output and the wire schema", () => {
  it("an_extra_sql_column_is_stripped_from_every_row", async () => {
    const leaky = listWith(`${OFFERING_WIRE_SELECT}, t.tenant_id, t.deleted_at`);
    const envelope = await pageOf(leaky);
    expect(envelope.data).toHaveLength(3);
    expect(Object.keys(envelope.data[0])).toContain("tenant_id");
    // Checked on every page, not only the first: the list's shape is refused for good.
    for (let i = 0; i < 2; i++) {
      const answered = await offeringListSchema.parseAsync(await pageOf(leaky));
      expect(answered.data).toHaveLength(3);
      for (const row of answered.data) expect(Object.keys(row).sort()).toEqual(WIRE_FIELDS);
      expect(JSON.stringify(answered)).not.toContain(tenantId);
    }
  });

  it("a_missing_sql_column_fails_the_output_check", async () => {
    const short = listWith(OFFERING_WIRE_SELECT.replace("t.title_ar,", ""));
    await expect(offeringListSchema.parseAsync(await pageOf(short))).rejects.toThrow(/title_ar/);
  });

  it("rows_changed_after_the_query_are_parsed_row_by_row", async () => {
    const sql = scopeSqlToTenant((await openDatabase()).writes, tenantId);
    const wireList = listWith(OFFERING_WIRE_SELECT);
    const page = await sqlKeysetPage<{ id: string }>(sql, wireList, { limit: 5 });
    const widened = toListEnvelope(page, (row) => ({ ...row, secret: "s3cr3t" }));
    const answered = await offeringListSchema.parseAsync(widened);
    expect(answered).not.toBe(widened);
    for (const row of answered.data) expect(Object.keys(row).sort()).toEqual(WIRE_FIELDS);
  });

  it("the_wire_select_passes_as_it_came_with_exactly_the_schema_fields", async () => {
    const envelope = await pageOf(listWith(OFFERING_WIRE_SELECT));
    expect(await offeringListSchema.parseAsync(envelope)).toBe(envelope);
    for (const row of envelope.data) expect(Object.keys(row).sort()).toEqual(WIRE_FIELDS);
  });

  it("GET_offerings_answers_200_with_exactly_the_schema_fields", async () => {
    const res = await call("GET", "/offerings?limit=2", { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.has_more).toBe(true);
    for (const row of res.body.data) expect(Object.keys(row).sort()).toEqual(WIRE_FIELDS);
    expect(res.text).not.toContain(tenantId);
  });
});
