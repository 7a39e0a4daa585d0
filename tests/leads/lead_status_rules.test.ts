// PATCH /leads/{id}: any move except back to `new`; leaving `new` sets qualified_at and emits
// lead.qualified once with the conversation's last 10 messages; lead.updated on every change.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation } from "../helpers/conversations";

async function leadWithMessages(messageCount: number) {
  const { tenantId, key } = await tenantWithKey();
  const conversation = await makeConversation(tenantId, "whatsapp");
  const messages = [];
  for (let i = 0; i < messageCount; i++) {
    messages.push((await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: `m${i}` } })).body);
  }
  const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id, attributes: { a: 1, b: 2 } } })).body;
  return { tenantId, key, conversation, lead, messages };
}

describe("PATCH /leads/{id}", () => {
  it("leaving `new` sets qualified_at and emits lead.updated and lead.qualified with the last 10 messages, oldest first", async () => {
    const { tenantId, key, lead, messages } = await leadWithMessages(12);
    const res = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "qualified" } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("qualified");
    expect(Date.parse(res.body.qualified_at)).toBeGreaterThanOrEqual(Date.parse(lead.created_at));

    const [qualified] = await eventsOf(tenantId, "lead.qualified");
    expect(qualified.data).toEqual({
      object: res.body,
      previous_attributes: { status: "new", qualified_at: null },
      messages: messages.slice(2),
    });
    expect((await eventsOf(tenantId, "lead.updated")).map((e) => e.data)).toEqual([
      { object: res.body, previous_attributes: { status: "new", qualified_at: null } },
    ]);
  });

  it("later moves keep qualified_at and never emit lead.qualified again; moving back to `new` is a 409", async () => {
    const { tenantId, key, lead } = await leadWithMessages(0);
    const qualified = (await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "qualified" } })).body;
    const booked = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "booked" } });
    expect(booked.body).toMatchObject({ status: "booked", qualified_at: qualified.qualified_at });
    const converted = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "converted" } });
    const lost = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "lost" } });
    expect([converted.status, lost.status, lost.body.status]).toEqual([200, 200, "lost"]);

    const back = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "new", notes: "retry" } });
    expect(back.status).toBe(409);
    expect(back.body).toEqual(errorOf("conflict", "lead is lost; a lead cannot move back to 'new'"));
    expect((await call("GET", "/leads", { key })).body.data[0]).toMatchObject({ status: "lost", notes: null });

    const [qualifiedEvent, ...more] = await eventsOf(tenantId, "lead.qualified");
    expect(qualifiedEvent.data.messages).toEqual([]);
    expect(more).toEqual([]);
    expect((await eventsOf(tenantId, "lead.updated")).map((e) => e.data.previous_attributes.status)).toEqual(["new", "qualified", "booked", "converted"]);
  });

  it("a new lead set to `new` again is a no-op without events; attributes shallow-merge", async () => {
    const { tenantId, key, lead } = await leadWithMessages(0);
    const same = await call("PATCH", `/leads/${lead.id}`, { key, body: { status: "new" } });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(lead);
    expect(await eventsOf(tenantId, "lead.updated")).toEqual([]);

    const merged = await call("PATCH", `/leads/${lead.id}`, { key, body: { attributes: { a: null, b: 3, c: "x" }, customer_name: "Sara" } });
    expect(merged.body).toMatchObject({ status: "new", attributes: { b: 3, c: "x" }, customer_name: "Sara", qualified_at: null });
    expect((await eventsOf(tenantId, "lead.updated")).map((e) => e.data.previous_attributes)).toEqual([{ customer_name: null, attributes: { a: 1, b: 2 } }]);
    expect(await eventsOf(tenantId, "lead.qualified")).toEqual([]);
  });

  it.each([
    [{}, "request body must contain at least one updatable field"],
    [{ status: "won" }, "invalid field 'status': must be one of new, qualified, booked, converted, lost"],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000" }, "field 'conversation_id' cannot be updated"],
    [{ qualified_at: null }, "field 'qualified_at' cannot be updated"],
    [{ attributes: "x" }, /^invalid field 'attributes': /],
  ])("400 for %j", async (body, message) => {
    const { key, lead } = await leadWithMessages(0);
    const res = await call("PATCH", `/leads/${lead.id}`, { key, body });
    expect(res.status).toBe(400);
    if (typeof message === "string") expect(res.body).toEqual(errorOf("bad_request", message));
    else expect(res.body.error.message).toMatch(message);
  });
});
