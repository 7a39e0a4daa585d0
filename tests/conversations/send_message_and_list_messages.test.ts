// POST /conversations/{id}/send with the default (record-only) driver, and GET …/messages.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";

describe("POST /conversations/{id}/send", () => {
  it("answers 201 with the sent message, counts it on the conversation and emits outbound.sent", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "whatsapp");
    const res = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "Your viewing is confirmed for 10:00." } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["author", "body", "conversation_id", "created_at", "direction", "id", "status"]);
    expect(res.body).toMatchObject({
      conversation_id: conversation.id,
      direction: "outbound",
      author: "operator",
      body: "Your viewing is confirmed for 10:00.",
      status: "sent",
    });

    const after = await call("GET", `/conversations/${conversation.id}`, { key });
    expect(after.body).toMatchObject({ message_count: 1, last_message_at: res.body.created_at });
    const db = await tenantDb(tenantId);
    const row = await db.conversation.findFirst({ where: { id: conversation.id } });
    expect(row!.lastActivityAt.toISOString()).toBe(res.body.created_at);

    const events = await eventsOf(tenantId, "outbound.sent");
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({
      object: res.body,
      conversation: { ...after.body, updated_at: events[0].data.conversation.updated_at },
      driver: "record",
      provider_message_id: null,
    });
    expect(await eventsOf(tenantId, "outbound.failed")).toEqual([]);
  });

  it("accepts 4096 characters and refuses 4097, an empty or blank body, and unknown fields (400 naming the field)", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "webchat");
    const path = `/conversations/${conversation.id}/send`;
    expect((await call("POST", path, { key, body: { body: "x".repeat(4096) } })).status).toBe(201);
    const tooLong = await call("POST", path, { key, body: { body: "x".repeat(4097) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/^invalid field 'body': /);
    const empty = await call("POST", path, { key, body: { body: "" } });
    expect(empty.body.error.message).toMatch(/^invalid field 'body': /);
    const blank = await call("POST", path, { key, body: { body: "   " } });
    expect(blank.body).toEqual(errorOf("bad_request", "invalid field 'body': must not be blank"));
    const missing = await call("POST", path, { key, body: {} });
    expect(missing.body).toEqual(errorOf("bad_request", "missing required field 'body'"));
    const unknown = await call("POST", path, { key, body: { body: "hi", author: "assistant" } });
    expect(unknown.body).toEqual(errorOf("bad_request", "unknown field 'author'"));
    const db = await tenantDb(tenantId);
    expect(await db.message.count({ where: { conversationId: conversation.id } })).toBe(1);
  });

  it("400 naming channel on a voice conversation, 409 on a closed one; nothing is stored or emitted", async () => {
    const { tenantId, key } = await tenantWithKey();
    const voice = await makeConversation(tenantId, "voice");
    const onVoice = await call("POST", `/conversations/${voice.id}/send`, { key, body: { body: "hello" } });
    expect(onVoice.status).toBe(400);
    expect(onVoice.body).toEqual(errorOf("bad_request", "invalid field 'channel': a 'voice' conversation cannot be sent text messages"));

    const sms = await makeConversation(tenantId, "sms");
    await call("PATCH", `/conversations/${sms.id}`, { key, body: { status: "closed" } });
    const onClosed = await call("POST", `/conversations/${sms.id}/send`, { key, body: { body: "hello" } });
    expect(onClosed.status).toBe(409);
    expect(onClosed.body).toEqual(errorOf("conflict", "conversation is closed; reopen it (PATCH status 'open') before sending"));

    const db = await tenantDb(tenantId);
    expect(await db.message.count()).toBe(0);
    expect(await eventsOf(tenantId, "outbound.sent")).toEqual([]);
    expect((await call("GET", `/conversations/${sms.id}`, { key })).body.message_count).toBe(0);
  });
});

describe("GET /conversations/{id}/messages", () => {
  it("lists the messages oldest first over several pages", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: `message ${i}` } })).body.id);
    // Another conversation's messages never appear.
    const other = await makeConversation(tenantId);
    const otherMessage = await call("POST", `/conversations/${other.id}/send`, { key, body: { body: "elsewhere" } });

    const seen: string[] = [];
    const bodies: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await call("GET", `/conversations/${conversation.id}/messages?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.status).toBe(200);
      pages++;
      seen.push(...res.body.data.map((m: { id: string }) => m.id));
      bodies.push(...res.body.data.map((m: { body: string }) => m.body));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(sent);
    expect(bodies).toEqual(["message 0", "message 1", "message 2", "message 3", "message 4"]);

    const wrongCursor = await call("GET", `/conversations/${conversation.id}/messages?cursor=${otherMessage.body.id}`, { key });
    expect(wrongCursor.status).toBe(400);
    expect(wrongCursor.body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
  });
});
