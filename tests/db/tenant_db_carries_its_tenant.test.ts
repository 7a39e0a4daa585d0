import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";

describe("scopeToTenant", () => {
  it("carries_its_tenant_id_on_the_client_and_inside_its_transactions", async () => {
    const tenantId = "00000000-0000-4000-8000-0000000000aa";
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    expect(db.tenantId).toBe(tenantId);
    const inside = await db.$transaction(async (tx) => tx.tenantId);
    expect(inside).toBe(tenantId);
  });
});
