// modelColumnsSql: in Prisma's tagged raw SQL a column taken from the model is written into the
// statement's text (a plain string there would be bound as a parameter), and a field the model does
// not have does not compile.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { Prisma } from "../../server/db/generated/client";
import { modelColumnsSql } from "../../server/db/sql-columns";
import { tenantWithKey } from "../helpers/api";

const TENANT = modelColumnsSql(Prisma.TenantScalarFieldEnum);

describe("modelColumnsSql", () => {
  it("a_column_is_statement_text_and_only_the_value_is_a_parameter", () => {
    const query = Prisma.sql`SELECT ${TENANT.handoffSlaMinutes} AS minutes FROM tenants WHERE ${TENANT.id} = ${"t"}::uuid`;
    expect(query.text).toBe("SELECT handoff_sla_minutes AS minutes FROM tenants WHERE id = $1::uuid");
    expect(query.values).toEqual(["t"]);
  });

  it("reads_the_named_column_of_the_migrated_table", async () => {
    const { tenantId } = await tenantWithKey();
    const db = (await openDatabase()).prisma;
    const rows = await db.$queryRaw<{ minutes: number }[]>`SELECT ${TENANT.handoffSlaMinutes} AS minutes FROM tenants WHERE ${TENANT.id} = ${tenantId}::uuid`;
    const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { handoffSlaMinutes: true } });
    expect(rows).toEqual([{ minutes: tenant.handoffSlaMinutes }]);
  });

  it("a_field_the_model_lacks_does_not_compile", () => {
    // @ts-expect-error `slaMinutes` is not a field of Tenant
    expect(TENANT.slaMinutes).toBeUndefined();
  });
});
