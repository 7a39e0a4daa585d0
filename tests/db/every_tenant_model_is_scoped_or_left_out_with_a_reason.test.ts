// Every Prisma model with a tenant column is either scoped by server/db/tenant-scope.ts (its rows
// filtered and stamped by tenant) or listed there as left out on purpose, with the reason. The models
// come from the generated client at run time (Prisma.ModelName and each model's scalar-field enum),
// so a new model with a tenant column fails this until someone decides.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { Prisma } from "../../server/db/generated/client";
import { scopeToTenant, TENANT_MODELS, UNSCOPED_TENANT_MODELS } from "../../server/db/tenant-scope";
import { newTenant } from "../helpers/api";

const TENANT_COLUMNS = ["tenantId", "organizationId"];
const fieldsOf = (model: string) => Object.keys((Prisma as unknown as Record<string, Record<string, string>>)[`${model}ScalarFieldEnum`] ?? {});
const models = Object.values(Prisma.ModelName);

describe("tenant scope", () => {
  it("every_model_with_a_tenant_column_is_scoped_or_left_out_with_a_reason", () => {
    expect(models.length).toBeGreaterThan(0);
    expect(models.every((model) => fieldsOf(model).length > 0)).toBe(true);
    const withTenantColumn = models.filter((model) => fieldsOf(model).some((field) => TENANT_COLUMNS.includes(field)));
    const undecided = withTenantColumn.filter((model) => !TENANT_MODELS.has(model) && !(model in UNSCOPED_TENANT_MODELS));
    expect(undecided).toEqual([]);
    for (const [model, reason] of Object.entries(UNSCOPED_TENANT_MODELS)) {
      expect(withTenantColumn, `${model} is listed as left out but has no tenant column`).toContain(model);
      expect(reason?.length, `${model}'s reason`).toBeGreaterThan(20);
      expect(TENANT_MODELS.has(model as Prisma.ModelName), `${model} is both scoped and left out`).toBe(false);
    }
  });

  it("every_scoped_model_has_the_tenantId_column_the_scope_filters_on", () => {
    const withoutTenantId = [...TENANT_MODELS].filter((model) => !fieldsOf(model).includes("tenantId"));
    expect(withoutTenantId).toEqual([]);
  });

  it("a_scoped_model_s_rows_of_another_tenant_are_not_read_and_creates_are_stamped_with_the_tenant", async () => {
    // AnalyticsDailyCount, the model most recently scoped: its rows are otherwise written by triggers.
    const db = (await openDatabase()).prisma;
    const [mine, theirs] = [await newTenant(), await newTenant()];
    const day = new Date("2026-01-05T00:00:00.000Z");
    await db.analyticsDailyCount.create({ data: { tenantId: theirs.id, day, metric: "walk.test", shard: 0, count: 7 } });
    const scoped = scopeToTenant(db, mine.id);
    expect(await scoped.analyticsDailyCount.findMany({ where: { metric: "walk.test" } })).toEqual([]);
    const created = await scoped.analyticsDailyCount.create({ data: { tenantId: theirs.id, day, metric: "walk.test", shard: 1, count: 1 } });
    expect(created.tenantId).toBe(mine.id);
    expect(await scoped.analyticsDailyCount.count({ where: { metric: "walk.test" } })).toBe(1);
  });
});
