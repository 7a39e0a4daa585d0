// PATCH /conversations/{id}: close (closed_at + conversation.closed), reopen (closed_at cleared),
// attributes shallow-merge, and every refusal.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation } from "../helpers/conversations";

describe("PATCH /conversations/{id}", () => {
  it("closing sets closed_at and emits conversation.closed once; reopening clears closed_at without an event", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const closed = await call("PATCH", `/conversations/${conversation.id}`, { key, body: { status: "closed" } });
    expect(closed.status).toBe(200);
    expect(closed.body.status).toBe("closed");
    expect(Date.parse(closed.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(conversation.created_at));
    expect(await eventsOf(tenantId, "conversation.closed")).toEqual([
      {
        type: "conversation.closed",
        data: { object: closed.body, previous_attributes: { status: "open", closed_at: null } },
      },
    ]);

    const closedAgain = await call("PATCH", `/conversations/${conversation.id}`, { key, body: { status: "closed" } });
    expect(closedAgain.status).toBe(200);
    expect(closedAgain.body).toEqual(closed.body);
    expect(await eventsOf(tenantId, "conversation.closed")).toHaveLength(1);

    const reopened = await call("PATCH", `/conversations/${conversation.id}`, { key, body: { status: "open" } });
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ status: "open", closed_at: null });
    expect(await eventsOf(tenantId, "conversation.closed")).toHaveLength(1);
  });

  it("shallow-merges attributes and sets or clears customer_name and summary", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    await call("PATCH", `/conversations/${conversation.id}`, {
      key,
      body: { attributes: { a: 1, b: { x: 1 } }, customer_name: "Mina", summary: "Wants a viewing" },
    });
    const res = await call("PATCH", `/conversations/${conversation.id}`, {
      key,
      body: { attributes: { a: null, b: { y: 2 }, c: "new" }, customer_name: null },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ attributes: { b: { y: 2 }, c: "new" }, customer_name: null, summary: "Wants a viewing", status: "open" });
    expect(await eventsOf(tenantId, "conversation.closed")).toEqual([]);
  });

  it.each([
    [{}, "request body must contain at least one updatable field"],
    [{ status: "handoff" }, "invalid field 'status': must be one of open, closed"],
    [{ channel: "sms" }, "field 'channel' cannot be updated"],
    [{ message_count: 3 }, "field 'message_count' cannot be updated"],
    [{ nope: 1 }, "unknown field 'nope'"],
    [{ summary: 5 }, /^invalid field 'summary': /],
  ])("400 for %j", async (body, message) => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const res = await call("PATCH", `/conversations/${conversation.id}`, { key, body });
    expect(res.status).toBe(400);
    if (typeof message === "string") expect(res.body).toEqual(errorOf("bad_request", message));
    else expect(res.body.error.message).toMatch(message);
  });
});
