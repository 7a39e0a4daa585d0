// The rollup's csat counts: answers and their mean score per UTC day and in total, null without answers.
import { describe, expect, it } from "vitest";
import { recordCsat } from "../../server/csat/csat.service";
import { call, tenantWithKey } from "../helpers/api";
import { makeConversation, tenantDb } from "../helpers/conversations";

const DAY = 86_400_000;
const dateOf = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10);

describe("GET /analytics/weekly-rollup csat", () => {
  it("counts_answers_and_their_average_score_per_day_and_in_total", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const db = await tenantDb(tenantId);
    for (const score of [5, 4, 4]) await recordCsat(db, { conversation_id: conversation.id, score });
    // Two answers dated two days ago.
    const earlier = new Date(Date.now() - 2 * DAY);
    await db.csatResponse.createMany({ data: [1, 2].map((score) => ({ tenantId, conversationId: conversation.id, score, createdAt: earlier })) });
    // Another tenant's answers never count.
    const other = await tenantWithKey();
    await recordCsat(await tenantDb(other.tenantId), { conversation_id: (await makeConversation(other.tenantId)).id, score: 1 });

    const res = await call("GET", "/analytics/weekly-rollup?days=7", { key });
    expect(res.status).toBe(200);
    expect(res.body.totals.csat).toEqual({ responses: 5, average_score: 3.2 });
    const byDate = Object.fromEntries(res.body.daily.map((d: { date: string; csat: unknown }) => [d.date, d.csat]));
    expect(byDate[dateOf(0)]).toEqual({ responses: 3, average_score: 4.33 });
    expect(byDate[dateOf(2)]).toEqual({ responses: 2, average_score: 1.5 });
    expect(byDate[dateOf(1)]).toEqual({ responses: 0, average_score: null });
  });
});
