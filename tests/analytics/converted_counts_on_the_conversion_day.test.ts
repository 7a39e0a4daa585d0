// `converted` in the rollup is dated by the lead's move to `converted`, not by its last change: a
// later edit (notes, attributes) must not move a past conversion to today.
import { describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { makeConversation, tenantDb } from "../helpers/conversations";

const DAY = 86_400_000;
const todayUtc = () => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
};
const dateOf = (daysAgo: number) => new Date(todayUtc() - daysAgo * DAY).toISOString().slice(0, 10);

async function convertedByDate(key: string) {
  const res = await call("GET", "/analytics/weekly-rollup?days=7", { key });
  expect(res.status).toBe(200);
  const byDate = Object.fromEntries(res.body.daily.map((d: any) => [d.date, d.leads.converted]));
  return { total: res.body.totals.leads.converted as number, today: byDate[dateOf(0)], twoDaysAgo: byDate[dateOf(2)] };
}

describe("leads converted per day", () => {
  it("a_lead_converted_then_edited_counts_on_the_day_it_converted", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body;
    expect((await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "converted" } })).status).toBe(200);
    expect(await convertedByDate(key)).toEqual({ total: 1, today: 1, twoDaysAgo: 0 });

    // The conversion happened two days ago (tests cannot wait days); today someone edits the notes.
    await (await tenantDb(tenantId)).lead.update({ where: { id: lead.id }, data: { convertedAt: new Date(todayUtc() - 2 * DAY + 3_600_000) } });
    const edited = await call("PATCH", `/leads/${lead.id}`, { key, body: { notes: "signed the lease" } });
    expect(edited.status).toBe(200);
    expect(edited.body.status).toBe("converted");
    expect(await convertedByDate(key)).toEqual({ total: 1, today: 0, twoDaysAgo: 1 });
  });

  it("a_lead_moved_off_converted_no_longer_counts_and_counts_again_on_the_day_it_returns", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body;
    await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "converted" } });
    await (await tenantDb(tenantId)).lead.update({ where: { id: lead.id }, data: { convertedAt: new Date(todayUtc() - 2 * DAY + 3_600_000) } });

    expect((await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "lost" } })).status).toBe(200);
    expect(await convertedByDate(key)).toEqual({ total: 0, today: 0, twoDaysAgo: 0 });
    expect((await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "converted" } })).status).toBe(200);
    expect(await convertedByDate(key)).toEqual({ total: 1, today: 1, twoDaysAgo: 0 });
  });
});
