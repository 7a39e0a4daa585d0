// POST /conversations: the (channel, normalized identifier) pair is the natural key — a new pair is
// 201 + conversation.created, an existing one 200 with the same row and no event, also under a race.
import { afterEach, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, tenantDb, uniquePhone } from "../helpers/conversations";

const CONVERSATION_KEYS = [
  "attributes",
  "channel",
  "closed_at",
  "created_at",
  "customer_identifier",
  "customer_identifier_kind",
  "customer_name",
  "id",
  "last_message_at",
  "message_count",
  "status",
  "summary",
  "updated_at",
].sort();

describe("POST /conversations", () => {
  afterEach(() => {
    delete process.env.DEFAULT_PHONE_REGION;
  });

  it("creates a conversation (201), normalizes the phone to E.164 and emits conversation.created", async () => {
    const { tenantId, key } = await tenantWithKey();
    const res = await call("POST", "/conversations", {
      key,
      body: {
        channel: "whatsapp",
        customer_identifier: " +971 50 111 2233 ",
        customer_name: "Layla",
        summary: "Asked about studios",
        attributes: { source: "ad", drop: null },
      },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(CONVERSATION_KEYS);
    expect(res.body).toMatchObject({
      channel: "whatsapp",
      customer_identifier: "+971501112233",
      customer_identifier_kind: "normalized",
      customer_name: "Layla",
      status: "open",
      summary: "Asked about studios",
      attributes: { source: "ad" },
      last_message_at: null,
      message_count: 0,
      closed_at: null,
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const events = await eventsOf(tenantId, "conversation.created");
    expect(events).toEqual([{ type: "conversation.created", data: { object: res.body } }]);
  });

  it("answers 200 with the existing conversation, unchanged and without an event, for the same pair written differently", async () => {
    const { tenantId, key } = await tenantWithKey();
    const first = await call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: "+971 50 222 3344", customer_name: "Omar" } });
    const again = await call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: "+971502223344", customer_name: "Someone else" } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await eventsOf(tenantId, "conversation.created")).toHaveLength(1);
  });

  it("keys on the channel too, lower-cases email and trims webchat ids", async () => {
    const { key } = await tenantWithKey();
    const phone = uniquePhone();
    const sms = await call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: phone } });
    const voice = await call("POST", "/conversations", { key, body: { channel: "voice", customer_identifier: phone } });
    expect([sms.status, voice.status]).toEqual([201, 201]);
    expect(voice.body.id).not.toBe(sms.body.id);

    const email = await call("POST", "/conversations", { key, body: { channel: "email", customer_identifier: " Sara.Khan@Example.COM " } });
    expect(email.body.customer_identifier).toBe("sara.khan@example.com");
    const emailAgain = await call("POST", "/conversations", { key, body: { channel: "email", customer_identifier: "sara.khan@example.com" } });
    expect([emailAgain.status, emailAgain.body.id]).toEqual([200, email.body.id]);

    const chat = await call("POST", "/conversations", { key, body: { channel: "webchat", customer_identifier: "  Visitor-ABC " } });
    expect(chat.body.customer_identifier).toBe("Visitor-ABC");
  });

  it("gives one conversation to 10 concurrent POSTs of the same pair: one 201 and nine 200s", async () => {
    const { tenantId, key } = await tenantWithKey();
    const phone = uniquePhone();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: phone } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const db = await tenantDb(tenantId);
    expect(await db.conversation.count({ where: { channel: "sms", customerIdentifier: phone } })).toBe(1);
    expect(await eventsOf(tenantId, "conversation.created")).toHaveLength(1);
  });

  it("reads a number without a country code in DEFAULT_PHONE_REGION, and refuses it when none is set", async () => {
    const { key } = await tenantWithKey();
    const refused = await call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: "050 333 4455" } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(
      errorOf("bad_request", "invalid field 'customer_identifier': not a valid phone number for channel 'sms' with its country code, e.g. +971501234567"),
    );

    process.env.DEFAULT_PHONE_REGION = "AE";
    const local = await call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: "050 333 4455" } });
    expect(local.status).toBe(201);
    expect(local.body.customer_identifier).toBe("+971503334455");
  });

  it.each([
    [
      { channel: "sms", customer_identifier: "not a phone" },
      "invalid field 'customer_identifier': not a valid phone number for channel 'sms' with its country code, e.g. +971501234567",
    ],
    [
      { channel: "voice", customer_identifier: "+97150123" },
      "invalid field 'customer_identifier': not a valid phone number for channel 'voice' with its country code, e.g. +971501234567",
    ],
    [{ channel: "email", customer_identifier: "nobody-at-example" }, "invalid field 'customer_identifier': not a valid email address for channel 'email'"],
    [{ channel: "webchat", customer_identifier: "   " }, "invalid field 'customer_identifier': must not be blank"],
    [{ channel: "fax", customer_identifier: "+971501234567" }, "invalid field 'channel': must be one of voice, sms, whatsapp, webchat, email"],
    [{ channel: "sms" }, "missing required field 'customer_identifier'"],
    [{ customer_identifier: "+971501234567" }, "missing required field 'channel'"],
    [{ channel: "sms", customer_identifier: "+971501234567", status: "closed" }, "unknown field 'status'"],
    [{ channel: "sms", customer_identifier: "+971501234567", attributes: [] }, /^invalid field 'attributes': /],
  ])("400 for %j", async (body, message) => {
    const { tenantId, key } = await tenantWithKey();
    const res = await call("POST", "/conversations", { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
    if (typeof message === "string") expect(res.body.error.message).toBe(message);
    else expect(res.body.error.message).toMatch(message);
    expect(await eventsOf(tenantId)).toEqual([]);
  });
});
