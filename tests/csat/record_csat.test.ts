// recordCsat: one stored answer and its csat.received in one transaction; another tenant's
// conversation is a 404 that stores and emits nothing.
import { describe, expect, it } from "vitest";
import { recordCsat } from "../../server/csat/csat.service";
import { recordCsatInput } from "../../server/csat/csat.types";
import { AppError, fromZodError } from "../../server/lib/errors";
import { tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";

describe("recordCsat", () => {
  it("stores_the_answer_and_emits_csat_received_with_it", async () => {
    const { tenantId } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const db = await tenantDb(tenantId);
    const csat = await recordCsat(db, recordCsatInput.parse({ conversation_id: conversation.id, score: 4, comment: "  Quick and kind  " }));
    expect(csat).toEqual({
      id: expect.any(String),
      conversation_id: conversation.id,
      score: 4,
      comment: "Quick and kind",
      created_at: expect.any(String),
    });
    expect(await eventsOf(tenantId, "csat.received")).toEqual([{ type: "csat.received", data: { object: csat } }]);
    const stored = await db.csatResponse.findMany();
    expect(stored.map((r) => [r.id, r.score, r.comment])).toEqual([[csat.id, 4, "Quick and kind"]]);
  });

  it("stores_an_empty_comment_as_null", async () => {
    const { tenantId } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const csat = await recordCsat(await tenantDb(tenantId), recordCsatInput.parse({ conversation_id: conversation.id, score: 1, comment: "   " }));
    expect(csat.comment).toBeNull();
  });

  it("404s_another_tenants_conversation_and_stores_nothing", async () => {
    const mine = await tenantWithKey();
    const theirs = await tenantWithKey();
    const conversation = await makeConversation(theirs.tenantId);
    const db = await tenantDb(mine.tenantId);
    const refused = await recordCsat(db, { conversation_id: conversation.id, score: 5 }).catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect([refused.status, refused.message]).toEqual([404, "resource not found"]);
    expect(await db.csatResponse.count()).toBe(0);
    expect(await eventsOf(mine.tenantId)).toEqual([]);
    expect(await (await tenantDb(theirs.tenantId)).csatResponse.count()).toBe(0);
  });

  it.each([
    [{ conversation_id: "00000000-0000-4000-8000-000000000000", score: 0 }, "invalid field 'score': must be an integer from 1 to 5"],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000", score: 4.5 }, "invalid field 'score': must be an integer from 1 to 5"],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000" }, "missing required field 'score'"],
    [
      { conversation_id: "00000000-0000-4000-8000-000000000000", score: 3, comment: "x".repeat(1001) },
      "invalid field 'comment': Too big: expected string to have <=1000 characters",
    ],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000", score: 3, rating: 3 }, "unknown field 'rating'"],
  ])("refuses %j naming the field", (input, message) => {
    const parsed = recordCsatInput.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(fromZodError(parsed.error!).message).toBe(message);
  });
});
