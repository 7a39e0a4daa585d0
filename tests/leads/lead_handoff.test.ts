// POST /leads/{id}/handoff: handoff_requested_at, conversation status `handoff`,
// conversation.handoff_requested; retry-safe; 409 on a closed conversation.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation } from "../helpers/conversations";

async function setup() {
  const { tenantId, key } = await tenantWithKey();
  const conversation = await makeConversation(tenantId);
  const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body;
  return { tenantId, key, conversation, lead };
}

describe("POST /leads/{id}/handoff", () => {
  it("sets handoff_requested_at, moves the conversation to handoff and emits conversation.handoff_requested", async () => {
    const { tenantId, key, conversation, lead } = await setup();
    const res = await call("POST", `/leads/${lead.id}/handoff`, { key, body: { reason: "Customer asked for a human" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: lead.id, status: "new" });
    expect(Date.parse(res.body.handoff_requested_at)).toBeGreaterThanOrEqual(Date.parse(lead.created_at));

    const after = (await call("GET", `/conversations/${conversation.id}`, { key })).body;
    expect(after.status).toBe("handoff");
    expect(await eventsOf(tenantId, "conversation.handoff_requested")).toEqual([
      {
        type: "conversation.handoff_requested",
        data: { object: after, previous_attributes: { status: "open" }, lead: res.body, reason: "Customer asked for a human" },
      },
    ]);
  });

  it("a repeated request changes nothing and emits nothing; an empty body is accepted", async () => {
    const { tenantId, key, lead } = await setup();
    const first = await call("POST", `/leads/${lead.id}/handoff`, { key, body: {} });
    const again = await call("POST", `/leads/${lead.id}/handoff`, { key, body: {} });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual(first.body);
    const events = await eventsOf(tenantId, "conversation.handoff_requested");
    expect(events).toHaveLength(1);
    expect(events[0].data.reason).toBeNull();
  });

  it("409 when the conversation is closed; nothing changes", async () => {
    const { tenantId, key, conversation, lead } = await setup();
    await call("PATCH", `/conversations/${conversation.id}`, { key, body: { status: "closed" } });
    const res = await call("POST", `/leads/${lead.id}/handoff`, { key, body: {} });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(errorOf("conflict", "the lead's conversation is closed; reopen it (PATCH status 'open') before requesting a handoff"));
    expect((await call("GET", `/conversations/${conversation.id}`, { key })).body.status).toBe("closed");
    expect(await eventsOf(tenantId, "conversation.handoff_requested")).toEqual([]);
  });

  it("400 naming reason or an unknown field", async () => {
    const { key, lead } = await setup();
    const long = await call("POST", `/leads/${lead.id}/handoff`, { key, body: { reason: "x".repeat(1001) } });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/^invalid field 'reason': /);
    const unknown = await call("POST", `/leads/${lead.id}/handoff`, { key, body: { urgent: true } });
    expect(unknown.body).toEqual(errorOf("bad_request", "unknown field 'urgent'"));
  });
});
