// The call lifecycle (the voice receivers' core), on both databases: each call emits `call.started`
// once and then exactly one of `call.completed` (answered) or `call.missed` (no answer, busy, failed,
// or abandoned before the assistant answered), however its reports arrive (repeated, concurrent,
// out of order); transcript turns become the conversation's messages once.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { applyCallReport, type CallReport } from "../../server/calls/calls.service";
import { newTenant } from "../helpers/api";
import { eventsOf, tenantDb, uniquePhone } from "../helpers/conversations";

const T0 = new Date("2026-11-21T10:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
let seq = 0;

function report(customerNumber: string, extra: Partial<CallReport> = {}): CallReport {
  return { provider: "retell", providerCallId: `call_${process.pid}_${++seq}`, direction: "inbound", customerNumber, startedAt: T0, ...extra };
}

const transcript = [
  { role: "assistant" as const, text: "Good morning, Marina Homes, how can I help?", at: at(1) },
  { role: "customer" as const, text: "Is the two-bedroom on Palm still available?", at: at(4) },
  { role: "assistant" as const, text: "It is. Would you like a viewing on Tuesday?", at: at(7) },
];

async function messagesOf(tenantId: string) {
  const rows = await (await openDatabase()).prisma.message.findMany({ where: { tenantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map((m) => [m.direction, m.author, m.status, m.body]);
}

describe("call lifecycle", () => {
  it("call_completed_once_for_an_answered_call_with_its_transcript_stored_as_messages", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    const start = report(phone);
    await applyCallReport(db, start);
    await applyCallReport(db, { ...start, answeredAt: at(1) });
    const end = await applyCallReport(db, {
      ...start,
      ended: { at: at(301), answered: true, reason: "user_hangup" },
      recordingUrl: "https://rec.example.com/1.wav",
      transcript,
    });

    expect(end.events).toEqual(["call.completed"]);
    expect(end.call).toMatchObject({
      status: "completed",
      answeredAt: at(1),
      endedAt: at(301),
      durationSeconds: 300,
      endReason: "user_hangup",
      recordingUrl: "https://rec.example.com/1.wav",
    });
    const events = await eventsOf(tenantId);
    expect(events.map((e) => e.type)).toEqual(["conversation.created", "call.started", "call.completed"]);
    expect(events[0].data.object).toMatchObject({ channel: "voice", customer_identifier: phone });
    expect(events[1].data.object).toMatchObject({
      id: end.call.id,
      status: "ringing",
      answered_at: null,
      provider: "retell",
      provider_call_id: start.providerCallId,
    });
    expect(events[2].data).toEqual({
      object: expect.objectContaining({ id: end.call.id, conversation_id: end.conversation.id, status: "completed", duration_seconds: 300 }),
      previous_attributes: { status: "in_progress", ended_at: null, duration_seconds: null, end_reason: null, recording_url: null },
    });
    expect(await messagesOf(tenantId)).toEqual([
      ["outbound", "assistant", "sent", transcript[0].text],
      ["inbound", "customer", "received", transcript[1].text],
      ["outbound", "assistant", "sent", transcript[2].text],
    ]);
    expect(end.conversation).toMatchObject({ messageCount: 3, lastMessageAt: at(7) });
  });

  it.each([
    ["no_answer", "dial_no_answer"],
    ["busy", "dial_busy"],
    ["failed", "dial_failed"],
    ["abandoned_before_the_assistant_answered", "user_hangup"],
  ])("call_missed_once_for_a_%s_call", async (_kind, reason) => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const start = report(uniquePhone());
    await applyCallReport(db, start);
    const end = await applyCallReport(db, { ...start, ended: { at: at(25), answered: false, reason } });
    expect(end.events).toEqual(["call.missed"]);
    expect(end.call).toMatchObject({ status: "missed", answeredAt: null, endedAt: at(25), durationSeconds: 0, endReason: reason });
    const events = await eventsOf(tenantId);
    expect(events.map((e) => e.type)).toEqual(["conversation.created", "call.started", "call.missed"]);
    expect(events[2].data).toEqual({ object: expect.objectContaining({ status: "missed", duration_seconds: 0, end_reason: reason }) });
  });

  it("one_call_started_and_one_call_completed_when_start_and_end_reports_arrive_5_times_each_concurrently", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const start = report(uniquePhone());
    const end = { ...start, answeredAt: at(1), ended: { at: at(61), answered: true, reason: "agent_hangup" }, transcript };
    await Promise.all(Array.from({ length: 10 }, (_, i) => applyCallReport(db, i % 2 ? end : start)));

    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["conversation.created", "call.started", "call.completed"]);
    const calls = await (await openDatabase()).prisma.call.findMany({ where: { tenantId } });
    expect(calls.map((c) => [c.status, c.durationSeconds])).toEqual([["completed", 60]]);
    expect(await messagesOf(tenantId)).toHaveLength(3);
    expect(await (await openDatabase()).prisma.conversation.findFirstOrThrow({ where: { tenantId } })).toMatchObject({ messageCount: 3 });
  });

  it("an_end_reported_first_emits_call_started_then_its_end_and_later_reports_change_nothing_but_missing_details", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const start = report(uniquePhone());
    const end = await applyCallReport(db, { ...start, ended: { at: at(90), answered: true, reason: "user_hangup", durationSeconds: 88 } });
    expect(end.events).toEqual(["call.started", "call.completed"]);
    expect(end.call).toMatchObject({ status: "completed", answeredAt: T0, durationSeconds: 88 });

    // A late start report and the analysis (summary) after the end: no event, no state change.
    const late = await applyCallReport(db, start);
    const analysed = await applyCallReport(db, { ...start, ended: { at: at(90), answered: false, reason: "x" }, summary: "Wants a viewing." });
    expect([late.events, analysed.events]).toEqual([[], []]);
    expect(analysed.call).toMatchObject({ status: "completed", endReason: "user_hangup", summary: "Wants a viewing.", durationSeconds: 88 });
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["conversation.created", "call.started", "call.completed"]);
  });

  it("a_call_reopens_the_callers_closed_voice_conversation_and_a_second_caller_gets_their_own", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    const first = await applyCallReport(db, report(phone, { ended: { at: at(5), answered: false, reason: "dial_no_answer" } }));
    await (await openDatabase()).prisma.conversation.update({ where: { id: first.conversation.id }, data: { status: "closed", closedAt: new Date() } });
    const second = await applyCallReport(db, report(phone));
    expect(second.conversation.id).toBe(first.conversation.id);
    expect(await (await openDatabase()).prisma.conversation.findUniqueOrThrow({ where: { id: first.conversation.id } })).toMatchObject({
      status: "open",
      closedAt: null,
    });
    const other = await applyCallReport(db, report(uniquePhone()));
    expect(other.conversation.id).not.toBe(first.conversation.id);
  });
});
