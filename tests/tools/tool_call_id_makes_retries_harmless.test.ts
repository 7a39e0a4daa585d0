// A write tool called with the runtime's tool_call_id: a repeat of the id (for the same tenant and
// tool) answers the first call's result and emits nothing more, also when the calls arrive at once.
import { describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";

/** The tenant's events other than the conversation.created of the test's own setup. */
const toolEvents = async (tenantId: string) => (await eventsOf(tenantId)).filter((e) => e.type !== "conversation.created");

const booking = (extra: Record<string, unknown> = {}) => ({
  customer_name: "Ali Reza",
  customer_phone: "+971501234567",
  scheduled_start: "2026-12-01T10:00:00.000Z",
  scheduled_end: "2026-12-01T10:30:00.000Z",
  ...extra,
});

describe("tool_call_id", () => {
  it("five_concurrent_book_appointment_calls_with_one_id_book_once_emit_once_and_answer_identically", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const body = booking({ conversation_id: conversation.id, tool_call_id: "call_5x_concurrent" });
    const answers = await Promise.all(Array.from({ length: 5 }, () => callTool(key, "book_appointment", body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const db = await tenantDb(tenantId);
    const appointments = await db.appointment.findMany();
    expect(appointments.map((a) => a.id)).toEqual([answers[0].body.id]);
    const events = await toolEvents(tenantId);
    expect(events).toEqual([{ type: "booking.created", data: { object: answers[0].body } }]);
    expect(await db.toolCall.count()).toBe(1);
  });

  it("a_later_repeat_answers_the_first_result_even_with_a_different_body", async () => {
    const { tenantId, key } = await tenantWithKey();
    const first = await callTool(key, "book_appointment", booking({ tool_call_id: "call_1" }));
    const again = await callTool(key, "book_appointment", booking({ tool_call_id: "call_1", customer_name: "Someone else" }));
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(await (await tenantDb(tenantId)).appointment.count()).toBe(1);
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["booking.created"]);
  });

  it("the_id_is_per_tenant_and_per_tool_and_a_new_id_or_no_id_acts_again", async () => {
    const mine = await tenantWithKey();
    const theirs = await tenantWithKey();
    const conversation = await makeConversation(mine.tenantId);
    const a = await callTool(mine.key, "book_appointment", booking({ tool_call_id: "same" }));
    const b = await callTool(theirs.key, "book_appointment", booking({ tool_call_id: "same" }));
    const c = await callTool(mine.key, "record_csat", { conversation_id: conversation.id, score: 5, tool_call_id: "same" });
    const d = await callTool(mine.key, "book_appointment", booking({ tool_call_id: "other" }));
    const e = await callTool(mine.key, "book_appointment", booking());
    const f = await callTool(mine.key, "book_appointment", booking());
    expect([a, b, c, d, e, f].map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set([a, b, d, e, f].map((r) => r.body.id)).size).toBe(5);
    expect(await (await tenantDb(mine.tenantId)).appointment.count()).toBe(4);
    expect((await toolEvents(mine.tenantId)).map((ev) => ev.type)).toEqual([
      "booking.created",
      "csat.received",
      "booking.created",
      "booking.created",
      "booking.created",
    ]);
  });

  it("a_failed_call_records_nothing_so_its_retry_runs_again", async () => {
    const { tenantId, key } = await tenantWithKey();
    const other = await tenantWithKey();
    const theirConversation = await makeConversation(other.tenantId);
    const refused = await callTool(key, "book_appointment", booking({ conversation_id: theirConversation.id, tool_call_id: "retry_me" }));
    expect(refused.status).toBe(404);
    const db = await tenantDb(tenantId);
    expect(await db.toolCall.count()).toBe(0);
    const retried = await callTool(key, "book_appointment", booking({ tool_call_id: "retry_me" }));
    expect(retried.status).toBe(200);
    expect(await db.appointment.count()).toBe(1);
  });

  it.each([
    ["", "invalid field 'tool_call_id': Too small: expected string to have >=1 characters"],
    ["x".repeat(256), "invalid field 'tool_call_id': Too big: expected string to have <=255 characters"],
    [42, "invalid field 'tool_call_id': Invalid input: expected string, received number"],
  ])("refuses_tool_call_id_%j_naming_it", async (toolCallId, message) => {
    const { key } = await tenantWithKey();
    const res = await callTool(key, "book_appointment", booking({ tool_call_id: toolCallId }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: "bad_request", message } });
  });

  it("read_tools_take_no_tool_call_id", async () => {
    const { key } = await tenantWithKey();
    const res = await callTool(key, "search_offerings", { query: "x", tool_call_id: "nope" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: "bad_request", message: "unknown field 'tool_call_id'" } });
  });
});
