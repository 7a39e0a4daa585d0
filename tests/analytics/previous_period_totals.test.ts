// The dashboard's "vs previous period": the same counts over the `days` whole UTC days just before
// the rollup's period, never overlapping it, tenant-scoped.
import { describe, expect, it } from "vitest";
import { call, dashboardCaller, tenantWithKey } from "../helpers/api";
import { makeConversation, tenantDb } from "../helpers/conversations";

const DAY = 86_400_000;
const todayUtc = () => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
};
const dateOf = (daysAgo: number) => new Date(todayUtc() - daysAgo * DAY).toISOString().slice(0, 10);

describe("previous period totals", () => {
  it("leads_created_before_the_period_count_in_the_previous_period_only_and_other_tenants_never", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const create = async () => (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body.id as string;
    const [today, eightDaysAgo, thirteenDaysAgo, fourteenDaysAgo] = [await create(), await create(), await create(), await create()];
    const db = await tenantDb(tenantId);
    const backdate = (id: string, daysAgo: number) => db.lead.update({ where: { id }, data: { createdAt: new Date(todayUtc() - daysAgo * DAY + 3_600_000) } });
    await backdate(eightDaysAgo, 8);
    await backdate(thirteenDaysAgo, 13);
    await backdate(fourteenDaysAgo, 14);
    expect(today).toBeTruthy();

    const previous = await dashboardCaller(tenantId, "member").analytics.previousPeriod({ days: 7 });
    expect(previous).toMatchObject({ days: 7, start_date: dateOf(13), end_date: dateOf(7) });
    expect(previous.totals.leads.created).toBe(2);
    const current = await dashboardCaller(tenantId, "member").analytics.weeklyRollup({ days: 7 });
    expect(current.start_date).toBe(dateOf(6));
    expect(current.totals.leads.created).toBe(1);

    const other = await tenantWithKey();
    expect((await dashboardCaller(other.tenantId).analytics.previousPeriod({ days: 7 })).totals.leads.created).toBe(0);
  });

  it("400_days_out_of_range_names_the_field", async () => {
    const { tenantId } = await tenantWithKey();
    await expect(dashboardCaller(tenantId).analytics.previousPeriod({ days: 91 })).rejects.toMatchObject({
      message: expect.stringContaining("must be an integer from 1 to 90"),
    });
  });
});
