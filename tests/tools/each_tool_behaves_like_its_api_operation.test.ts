// Every tool: its happy path with exactly the events the matching /api/v1 operation emits (and no
// other), a 400 naming the field, and a 404 for another tenant's ids that stores and emits nothing.
// (401, the 403 naming the scope and the byte-identical 404 of every tool over REST and MCP:
// tests/api/every_operation_checks_key_scope_and_tenant.test.ts.)
import { beforeAll, describe, expect, it } from "vitest";
import type { Scope } from "../../server/auth/principal";
import { call, newKey, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { makeConversation, tenantDb } from "../helpers/conversations";

const MISSING = "00000000-0000-4000-8000-000000000000";
const NOT_FOUND = { error: { code: "not_found", message: "resource not found" } };
const HOUR = 3_600_000;
const at = (hoursFromNow: number) => new Date(Date.now() + hoursFromNow * HOUR).toISOString();

/** The events a piece of work caused, oldest first (type and data). */
async function eventsDuring<T>(tenantId: string, work: () => Promise<T>): Promise<{ result: T; events: { type: string; data: any }[] }> {
  const db = await tenantDb(tenantId);
  const before = new Set((await db.event.findMany({ select: { id: true } })).map((e) => e.id));
  const result = await work();
  const rows = await db.event.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return { result, events: rows.filter((r) => !before.has(r.id)).map((r) => ({ type: r.type, data: r.data as any })) };
}

async function keyWith(tenantId: string, scopes: Scope[]) {
  return (await newKey(tenantId, scopes)).key;
}

async function expectBadRequest(key: string, tool: string, input: unknown, message: string) {
  const res = await callTool(key, tool, input);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: { code: "bad_request", message } });
}

/** A foreign id and a missing id get the same 404, and nothing is stored or emitted. */
async function expectSameNotFound(tenantId: string, key: string, tool: string, foreign: unknown, missing: unknown) {
  const { result, events } = await eventsDuring(tenantId, async () => [await callTool(key, tool, foreign), await callTool(key, tool, missing)]);
  for (const res of result) {
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  }
  expect(result[0].text).toBe(result[1].text);
  expect(events).toEqual([]);
}

let tenantId: string;
let key: string;
let other: { tenantId: string; key: string };
let theirConversation: { id: string };
let theirLead: { id: string };
let theirAppointment: { id: string };

beforeAll(async () => {
  ({ tenantId, key } = await tenantWithKey());
  other = await tenantWithKey();
  theirConversation = await makeConversation(other.tenantId);
  theirLead = (await call("POST", "/leads", { key: other.key, body: { conversation_id: theirConversation.id } })).body;
  theirAppointment = (
    await callTool(other.key, "book_appointment", { customer_name: "X", customer_phone: "+971501234567", scheduled_start: at(24), scheduled_end: at(25) })
  ).body;
});

describe("search_offerings", () => {
  it("answers_matching_active_offerings_with_assistant_read_or_read_and_emits_nothing", async () => {
    const t = await tenantWithKey();
    const created = (
      await call("POST", "/offerings", {
        key: t.key,
        body: { title: "Marina apartment", title_ar: "شقة المارينا", price: 1, price_currency: "AED", attributes: { bedrooms: 2 } },
      })
    ).body;
    await call("POST", "/offerings", { key: other.key, body: { title: "Marina apartment elsewhere", price: 1, price_currency: "AED" } });
    for (const scopes of [["assistant:read"], ["read"]] as Scope[][]) {
      const { result, events } = await eventsDuring(t.tenantId, async () =>
        callTool(await keyWith(t.tenantId, scopes), "search_offerings", { query: "Marina APART", attributes: { bedrooms: 2 } }),
      );
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ data: [created] });
      expect(events).toEqual([]);
    }
  });

  it("400_names_the_field", async () => {
    await expectBadRequest(key, "search_offerings", { limit: 11 }, "invalid field 'limit': must be an integer from 1 to 10");
    await expectBadRequest(
      key,
      "search_offerings",
      { attributes: { bedrooms: [2] } },
      "invalid field 'attributes.bedrooms': each filter value must be a string, a number or a boolean",
    );
  });
});

describe("get_conversation_context", () => {
  it("answers_the_conversation_its_last_20_messages_its_newest_lead_and_upcoming_appointments", async () => {
    const t = await tenantWithKey();
    const conversation = await makeConversation(t.tenantId);
    const db = await tenantDb(t.tenantId);
    const start = Date.now() - 3 * HOUR;
    for (let i = 0; i < 22; i++) {
      await db.message.create({
        data: {
          tenantId: t.tenantId,
          conversationId: conversation.id,
          direction: "inbound",
          author: "customer",
          body: `m${i}`,
          status: "received",
          createdAt: new Date(start + i * 1000),
        },
      });
    }
    await call("POST", "/leads", { key: t.key, body: { conversation_id: conversation.id } });
    const newest = (await call("POST", "/leads", { key: t.key, body: { conversation_id: conversation.id, notes: "newest" } })).body;
    const book = async (body: Record<string, unknown>) =>
      (await call("POST", "/appointments", { key: t.key, body: { customer_name: "A", customer_phone: "+971501234567", ...body } })).body;
    const later = await book({ conversation_id: conversation.id, scheduled_start: at(48), scheduled_end: at(49) });
    const viaLead = await book({ lead_id: newest.id, scheduled_start: at(24), scheduled_end: at(25) });
    await book({ conversation_id: conversation.id, scheduled_start: at(-5), scheduled_end: at(-4) });
    const cancelled = await book({ conversation_id: conversation.id, scheduled_start: at(30), scheduled_end: at(31) });
    await call("PATCH", `/appointments/${cancelled.id}`, { key: t.key, body: { status: "cancelled" } });
    await book({ scheduled_start: at(26), scheduled_end: at(27) }); // not linked to this conversation

    const { result, events } = await eventsDuring(t.tenantId, () => callTool(t.key, "get_conversation_context", { conversation_id: conversation.id }));
    expect(result.status).toBe(200);
    const shown = (await call("GET", `/conversations/${conversation.id}`, { key: t.key })).body;
    expect(result.body.conversation).toEqual(shown);
    expect(result.body.messages.map((m: { body: string }) => m.body)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i + 2}`));
    expect(result.body.lead).toEqual(newest);
    expect(result.body.upcoming_appointments).toEqual([viaLead, later]);
    expect(events).toEqual([]);
  });

  it("a_conversation_without_a_lead_has_lead_null", async () => {
    const conversation = await makeConversation(tenantId);
    const res = await callTool(key, "get_conversation_context", { conversation_id: conversation.id });
    expect(res.status).toBe(200);
    expect([res.body.lead, res.body.messages, res.body.upcoming_appointments]).toEqual([null, [], []]);
  });

  it("404_400", async () => {
    await expectSameNotFound(tenantId, key, "get_conversation_context", { conversation_id: theirConversation.id }, { conversation_id: MISSING });
    await expectBadRequest(key, "get_conversation_context", { conversation_id: "nope" }, "invalid field 'conversation_id': must be a uuid");
    await expectBadRequest(key, "get_conversation_context", {}, "missing required field 'conversation_id'");
  });
});

describe("upsert_lead", () => {
  it("creates_the_conversations_lead_with_lead_created_then_updates_it_with_lead_updated", async () => {
    const conversation = await makeConversation(tenantId);
    const created = await eventsDuring(tenantId, () =>
      callTool(key, "upsert_lead", { conversation_id: conversation.id, customer_name: "Ali", attributes: { budget: 1 } }),
    );
    expect(created.result.status).toBe(200);
    expect(created.result.body).toMatchObject({ conversation_id: conversation.id, status: "new", customer_name: "Ali", attributes: { budget: 1 } });
    expect(created.events).toEqual([{ type: "lead.created", data: { object: created.result.body } }]);

    const updated = await eventsDuring(tenantId, () =>
      callTool(key, "upsert_lead", { conversation_id: conversation.id, notes: "2 bedrooms", attributes: { budget: null, area: "Marina" } }),
    );
    expect(updated.result.body).toMatchObject({ id: created.result.body.id, notes: "2 bedrooms", attributes: { area: "Marina" } });
    expect(updated.events).toEqual([
      { type: "lead.updated", data: { object: updated.result.body, previous_attributes: { notes: null, attributes: { budget: 1 } } } },
    ]);

    const same = await eventsDuring(tenantId, () => callTool(key, "upsert_lead", { conversation_id: conversation.id, notes: "2 bedrooms" }));
    expect(same.result.body).toEqual(updated.result.body);
    expect(same.events).toEqual([]);
  });

  it("a_status_leaving_new_qualifies_by_the_existing_rules", async () => {
    const conversation = await makeConversation(tenantId);
    const { result, events } = await eventsDuring(tenantId, () => callTool(key, "upsert_lead", { conversation_id: conversation.id, status: "qualified" }));
    expect(result.body).toMatchObject({ status: "qualified", qualified_at: expect.any(String) });
    expect(events.map((e) => e.type)).toEqual(["lead.created", "lead.updated", "lead.qualified"]);
    expect(events[2].data).toMatchObject({ object: result.body, previous_attributes: { status: "new", qualified_at: null }, messages: [] });

    const back = await callTool(key, "upsert_lead", { conversation_id: conversation.id, status: "new" });
    expect(back.status).toBe(409);
    expect(back.body).toEqual({ error: { code: "conflict", message: "lead is qualified; a lead cannot move back to 'new'" } });
  });

  it("concurrent_first_calls_make_one_lead", async () => {
    const conversation = await makeConversation(tenantId);
    const { result, events } = await eventsDuring(tenantId, () =>
      Promise.all(Array.from({ length: 5 }, () => callTool(key, "upsert_lead", { conversation_id: conversation.id, customer_name: "Same" }))),
    );
    expect(result.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(result.map((r) => r.body.id)).size).toBe(1);
    expect(events.map((e) => e.type)).toEqual(["lead.created"]);
  });

  it("404_400", async () => {
    const mine = await makeConversation(tenantId);
    const theirOffering = (await call("POST", "/offerings", { key: other.key, body: { title: "T", price: 1, price_currency: "AED" } })).body;
    await expectSameNotFound(tenantId, key, "upsert_lead", { conversation_id: theirConversation.id }, { conversation_id: MISSING });
    await expectSameNotFound(
      tenantId,
      key,
      "upsert_lead",
      { conversation_id: mine.id, offering_id: theirOffering.id },
      { conversation_id: mine.id, offering_id: MISSING },
    );
    await expectBadRequest(
      key,
      "upsert_lead",
      { conversation_id: mine.id, customer_email: "nope" },
      "invalid field 'customer_email': must be an email address",
    );
    await expectBadRequest(
      key,
      "upsert_lead",
      { conversation_id: mine.id, status: "won" },
      "invalid field 'status': must be one of new, qualified, booked, converted, lost",
    );
    await expectBadRequest(key, "upsert_lead", { conversation_id: mine.id, qualified_at: null }, "unknown field 'qualified_at'");
  });
});

describe("book_appointment, reschedule_appointment, cancel_appointment", () => {
  const booking = (extra: Record<string, unknown> = {}) => ({
    customer_name: "Ali",
    customer_phone: "+971501234567",
    scheduled_start: at(24),
    scheduled_end: at(25),
    ...extra,
  });

  it("book_answers_what_post_appointments_answers_and_emits_booking_created", async () => {
    const conversation = await makeConversation(tenantId);
    const { result, events } = await eventsDuring(tenantId, () => callTool(key, "book_appointment", booking({ conversation_id: conversation.id })));
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ status: "confirmed", conversation_id: conversation.id, customer_name: "Ali" });
    expect(events).toEqual([{ type: "booking.created", data: { object: result.body } }]);
    const api = await call("POST", "/appointments", { key, body: booking({ conversation_id: conversation.id }) });
    expect(Object.keys(api.body)).toEqual(Object.keys(result.body));
  });

  it("reschedule_emits_booking_rescheduled_and_cancel_emits_booking_cancelled", async () => {
    const booked = (await callTool(key, "book_appointment", booking())).body;
    const moved = await eventsDuring(tenantId, () =>
      callTool(key, "reschedule_appointment", { appointment_id: booked.id, scheduled_start: at(50), scheduled_end: at(51) }),
    );
    expect(moved.result.status).toBe(200);
    expect(moved.events).toEqual([
      {
        type: "booking.rescheduled",
        data: { object: moved.result.body, previous_attributes: { scheduled_start: booked.scheduled_start, scheduled_end: booked.scheduled_end } },
      },
    ]);
    const cancelled = await eventsDuring(tenantId, () => callTool(key, "cancel_appointment", { appointment_id: booked.id }));
    expect(cancelled.result.body.status).toBe("cancelled");
    expect(cancelled.events).toEqual([{ type: "booking.cancelled", data: { object: cancelled.result.body, previous_attributes: { status: "confirmed" } } }]);
    // Cancelling again changes nothing (as the same PATCH would); moving a cancelled appointment is a 409.
    const again = await eventsDuring(tenantId, () => callTool(key, "cancel_appointment", { appointment_id: booked.id }));
    expect([again.result.status, again.result.text, again.events]).toEqual([200, cancelled.result.text, []]);
    const late = await callTool(key, "reschedule_appointment", { appointment_id: booked.id, scheduled_start: at(60), scheduled_end: at(61) });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: { code: "conflict", message: "appointment is cancelled; a cancelled appointment cannot be changed" } });
  });

  it("404_400", async () => {
    await expectSameNotFound(tenantId, key, "book_appointment", booking({ lead_id: theirLead.id }), booking({ lead_id: MISSING }));
    await expectSameNotFound(
      tenantId,
      key,
      "reschedule_appointment",
      { appointment_id: theirAppointment.id, scheduled_start: at(1), scheduled_end: at(2) },
      { appointment_id: MISSING, scheduled_start: at(1), scheduled_end: at(2) },
    );
    await expectSameNotFound(tenantId, key, "cancel_appointment", { appointment_id: theirAppointment.id }, { appointment_id: MISSING });
    await expectBadRequest(key, "book_appointment", booking({ scheduled_end: at(23) }), "invalid field 'scheduled_end': must be after scheduled_start");
    await expectBadRequest(key, "book_appointment", booking({ scheduled_start: "tomorrow" }), "invalid field 'scheduled_start': must be an ISO 8601 date-time");
    await expectBadRequest(key, "reschedule_appointment", { scheduled_start: at(1), scheduled_end: at(2) }, "missing required field 'appointment_id'");
    await expectBadRequest(key, "cancel_appointment", { appointment_id: MISSING, status: "cancelled" }, "unknown field 'status'");
    expect(await (await tenantDb(other.tenantId)).appointment.findFirstOrThrow({ where: { id: theirAppointment.id } })).toMatchObject({ status: "confirmed" });
  });
});

describe("request_handoff", () => {
  it("emits_conversation_handoff_requested_like_post_leads_handoff_and_a_repeat_changes_nothing", async () => {
    const conversation = await makeConversation(tenantId);
    const lead = (await callTool(key, "upsert_lead", { conversation_id: conversation.id })).body;
    const { result, events } = await eventsDuring(tenantId, () => callTool(key, "request_handoff", { lead_id: lead.id, reason: "Wants a person" }));
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id: lead.id, handoff_requested_at: expect.any(String) });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "conversation.handoff_requested",
      data: { object: { id: conversation.id, status: "handoff" }, previous_attributes: { status: "open" }, lead: result.body, reason: "Wants a person" },
    });
    const repeat = await eventsDuring(tenantId, () => callTool(key, "request_handoff", { lead_id: lead.id }));
    expect([repeat.result.status, repeat.result.text, repeat.events]).toEqual([200, result.text, []]);
  });

  it("404_400", async () => {
    await expectSameNotFound(tenantId, key, "request_handoff", { lead_id: theirLead.id }, { lead_id: MISSING });
    await expectBadRequest(
      key,
      "request_handoff",
      { lead_id: MISSING, reason: "x".repeat(1001) },
      "invalid field 'reason': Too big: expected string to have <=1000 characters",
    );
    await expectBadRequest(key, "request_handoff", { conversation_id: MISSING }, "missing required field 'lead_id'");
  });
});

describe("record_csat", () => {
  it("stores_the_answer_and_emits_csat_received", async () => {
    const conversation = await makeConversation(tenantId);
    const { result, events } = await eventsDuring(tenantId, () =>
      callTool(key, "record_csat", { conversation_id: conversation.id, score: 4, comment: "Helpful" }),
    );
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ conversation_id: conversation.id, score: 4, comment: "Helpful" });
    expect(events).toEqual([{ type: "csat.received", data: { object: result.body } }]);
  });

  it("404_400", async () => {
    await expectSameNotFound(tenantId, key, "record_csat", { conversation_id: theirConversation.id, score: 3 }, { conversation_id: MISSING, score: 3 });
    await expectBadRequest(key, "record_csat", { conversation_id: MISSING, score: 6 }, "invalid field 'score': must be an integer from 1 to 5");
    await expectBadRequest(
      key,
      "record_csat",
      { conversation_id: MISSING, score: 3, comment: "x".repeat(1001) },
      "invalid field 'comment': Too big: expected string to have <=1000 characters",
    );
    expect(await (await tenantDb(other.tenantId)).csatResponse.count()).toBe(0);
  });
});
