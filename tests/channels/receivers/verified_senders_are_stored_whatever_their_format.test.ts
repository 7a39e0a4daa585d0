// A provider's signed message or call is proof its sender exists, so no receiver refuses one for the
// format of its sender (real HTTP, a real front process, every request signed as its provider signs):
// a number libphonenumber's metadata does not list as allocated (+97151…) is stored in E.164
// (`normalized`); a short code and an alphanumeric sender id are stored as the provider sent them
// (`customer_identifier_kind` `as_sent`). Each answers the provider's success, lands in a
// conversation with its `conversation.created` (and the call's events), and a reply works through
// the connected provider: to the new number it is sent; to a short code it is handed to the provider,
// which decides (the fakes refuse it as Twilio and Meta do: `failed` with their error); to an
// alphanumeric sender it is a 409 and nothing is stored (such ids cannot receive messages).
import { createHmac, randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { sign as retellSign } from "retell-sdk/lib/webhook_auth";
import type { Running } from "../../../scripts/bench/services";
import { getDb } from "../../../server/db/client";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { toE164 } from "../../../server/lib/customer-identifier";
import { tenantWithKey } from "../../helpers/api";
import { startReceiverFront } from "../../helpers/receiver-front";
import { uniqueBusinessNumber, whatsAppNotification } from "../fixtures";
import { startFakeGraph, startFakeTwilio } from "../fake-providers";
import { tenantState, type TenantState } from "./api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const GRAPH_VERSION = "v23.0";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
const TWILIO_TOKEN = "twilio-auth-token-of-the-senders-test";
const APP_SECRET = "whatsapp-app-secret-of-the-senders-test";
const ACCESS_TOKEN = "EAAG-access-token-of-the-senders-test";
const RETELL_KEY = "key_retell_senders_test_0001";
const VAPI_SECRET = "vapi-hmac-secret-of-the-senders-test";

let seq = 0;
const hex32 = () => (Date.now().toString(16) + process.pid.toString(16) + (++seq).toString(16).padStart(6, "0")).padStart(32, "0").slice(-32);
const accountSid = `AC${hex32()}`;
const phoneNumberId = `${Date.now()}${process.pid}`.slice(-15);

/** A UAE number in the 051 range, which the metadata does not list as allocated: possible, not valid. */
function unallocatedNumber(): string {
  const number = `+97151${String(randomInt(10_000_000)).padStart(7, "0")}`;
  expect(toE164(number)).toBeNull();
  return number;
}
const shortCode = () => String(randomInt(10_000, 99_999));
const alphanumeric = () => `MarinaBank${randomInt(1000)}`;

type Sender = [what: string, sent: () => string];
/** What each sender is stored as: the unallocated number as is (it is E.164 already), the others as sent. */
const stored = (sent: string) =>
  sent.startsWith("+")
    ? { customer_identifier: sent, customer_identifier_kind: "normalized" }
    : { customer_identifier: sent, customer_identifier_kind: "as_sent" };

describe("senders of any format, verified by their provider (real HTTP)", { timeout: 120_000 }, () => {
  const sms = uniqueBusinessNumber();
  const twilioWhatsApp = uniqueBusinessNumber();
  const twilioVoice = uniqueBusinessNumber();
  const retellNumber = uniqueBusinessNumber();
  const vapiNumber = uniqueBusinessNumber();
  let twilio: Awaited<ReturnType<typeof startFakeTwilio>>;
  let graph: Awaited<ReturnType<typeof startFakeGraph>>;
  let front: Running;
  let a: { tenantId: string; key: string }; // Twilio SMS and voice, WhatsApp Cloud, Retell, Vapi
  let b: { tenantId: string; key: string }; // WhatsApp through Twilio

  beforeAll(async () => {
    twilio = await startFakeTwilio({ accounts: [{ sid: accountSid, token: TWILIO_TOKEN, numbers: [sms, twilioWhatsApp] }] });
    graph = await startFakeGraph({ version: GRAPH_VERSION, numbers: [{ phoneNumberId, accessToken: ACCESS_TOKEN }] });
    [a, b] = await Promise.all([tenantWithKey(), tenantWithKey()]);
    const connect = async (tenantId: string, input: Parameters<typeof connectChannel>[1]) =>
      connectChannel(scopeToTenant(await getDb(), tenantId), input, OPERATOR);
    const twilioCredentials = { account_sid: accountSid, auth_token: TWILIO_TOKEN };
    await connect(a.tenantId, { provider: "twilio", channel: "sms", address: sms, credentials: twilioCredentials });
    await connect(a.tenantId, { provider: "twilio", channel: "voice", address: twilioVoice, credentials: twilioCredentials });
    await connect(a.tenantId, {
      provider: "whatsapp_cloud",
      channel: "whatsapp",
      address: phoneNumberId,
      credentials: { app_secret: APP_SECRET, verify_token: "v", access_token: ACCESS_TOKEN },
    });
    await connect(a.tenantId, { provider: "retell", channel: "voice", address: retellNumber, credentials: { api_key: RETELL_KEY } });
    await connect(a.tenantId, { provider: "vapi", channel: "voice", address: vapiNumber, credentials: { secret: VAPI_SECRET } });
    await connect(b.tenantId, { provider: "twilio", channel: "whatsapp", address: twilioWhatsApp, credentials: twilioCredentials });
    front = await startReceiverFront({
      PUBLIC_BASE_URL,
      TWILIO_API_BASE_URL: twilio.url,
      WHATSAPP_GRAPH_BASE_URL: graph.url,
      WHATSAPP_GRAPH_API_VERSION: GRAPH_VERSION,
      RATE_LIMIT_PER_KEY: "100000",
      RATE_LIMIT_PER_TENANT: "100000",
    });
  });
  afterAll(async () => {
    await front?.stop();
    await twilio?.close();
    await graph?.close();
  });

  async function api(key: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${front.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  }

  async function postTwilio(path: string, params: Record<string, string>) {
    const res = await fetch(`${front.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_BASE_URL}${path}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: await res.text() };
  }
  async function postJson(path: string, body: unknown, header: string, signature: (raw: string) => string | Promise<string>) {
    const raw = JSON.stringify(body);
    const res = await fetch(`${front.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", [header]: await signature(raw) },
      body: raw,
    });
    return { status: res.status, body: await res.json() };
  }
  const hmac = (secret: string) => (raw: string) => createHmac("sha256", secret).update(raw).digest("hex");

  /** The one conversation `what` added, with its new events, messages and calls. */
  function added(before: TenantState, after: TenantState) {
    const conversations = after.conversations.filter((c) => !before.conversations.some((b) => b.id === c.id));
    expect(conversations).toHaveLength(1);
    const [conversation] = conversations;
    return {
      conversation,
      events: after.events.slice(before.events.length).map((e) => e.event),
      messages: after.messages.filter((m) => m.conversation_id === conversation.id),
      calls: after.calls.filter((c) => c.conversation_id === conversation.id),
    };
  }

  /** The reply's answer and, when it went out, what the provider was asked to send to. */
  async function reply(key: string, conversationId: string) {
    return api(key, "POST", `/conversations/${conversationId}/send`, { body: "Thanks, we will call you back today." });
  }

  /** A reply to the sender: sent to the new number; a short code left to the provider (which refuses it); an alphanumeric id refused with a 409. */
  async function expectReply(tenant: { key: string }, conversationId: string, sent: string, provider: "twilio" | "whatsapp_cloud") {
    const before = await tenantState(front.url, tenant.key);
    const answer = await reply(tenant.key, conversationId);
    if (sent.startsWith("+")) {
      expect([answer.status, answer.body.status]).toEqual([201, "sent"]);
      const requests = provider === "twilio" ? twilio.forTo(sent) : graph.forTo(sent.slice(1));
      expect(requests).toHaveLength(1);
    } else if (/^\d+$/.test(sent)) {
      // Handed to the provider as sent; the fakes refuse a short code as Twilio and Meta do.
      expect([answer.status, answer.body.status]).toEqual([201, "failed"]);
      const after = await tenantState(front.url, tenant.key);
      const failed = after.events.slice(before.events.length).find((e) => e.event === "outbound.failed");
      expect(failed?.data.error).toBe(
        provider === "twilio" ? `twilio responded 400: 21211 Invalid 'To' Phone Number: ${sent}` : "whatsapp_cloud responded 400: 100 (#100) Invalid parameter",
      );
    } else {
      expect(answer).toEqual({
        status: 409,
        body: {
          error: {
            code: "conflict",
            message:
              "the conversation's customer is an alphanumeric sender id (customer_identifier_kind 'as_sent'), which cannot receive messages; reach the customer on another channel",
          },
        },
      });
      expect(await tenantState(front.url, tenant.key)).toEqual(before);
    }
  }

  const messagingSenders: Sender[] = [
    ["an_unallocated_number", unallocatedNumber],
    ["a_short_code", shortCode],
    ["an_alphanumeric_sender_id", alphanumeric],
  ];

  it.each(messagingSenders)("twilio_sms_from_%s_is_stored_with_its_event_and_answered_by_a_reply", async (_what, make) => {
    const sent = make();
    const before = await tenantState(front.url, a.key);
    const params = {
      MessageSid: `SM${hex32()}`,
      AccountSid: accountSid,
      From: sent,
      To: sms,
      Body: "Is the villa still available?",
      NumMedia: "0",
      SmsStatus: "received",
    };
    expect(await postTwilio("/api/webhooks/twilio/messaging", params)).toEqual({ status: 200, body: EMPTY_TWIML });
    const { conversation, events, messages } = added(before, await tenantState(front.url, a.key));
    expect(conversation).toMatchObject({ channel: "sms", ...stored(sent), message_count: 1 });
    expect(events).toEqual(["conversation.created"]);
    expect(messages.map((m) => [m.author, m.status, m.body])).toEqual([["customer", "received", "Is the villa still available?"]]);
    // The same sender again is the same conversation.
    expect((await postTwilio("/api/webhooks/twilio/messaging", { ...params, MessageSid: `SM${hex32()}` })).status).toBe(200);
    expect((await api(a.key, "GET", `/conversations/${conversation.id}`)).body.message_count).toBe(2);
    await expectReply(a, conversation.id, sent, "twilio");
  });

  it.each(messagingSenders.slice(0, 2))("twilio_whatsapp_from_%s_is_stored_with_its_event_and_answered_by_a_reply", async (_what, make) => {
    const sent = make();
    const before = await tenantState(front.url, b.key);
    const params = {
      MessageSid: `SM${hex32()}`,
      AccountSid: accountSid,
      From: `whatsapp:${sent}`,
      To: `whatsapp:${twilioWhatsApp}`,
      Body: "Hello",
      NumMedia: "0",
    };
    expect(await postTwilio("/api/webhooks/twilio/messaging", params)).toEqual({ status: 200, body: EMPTY_TWIML });
    const { conversation, events, messages } = added(before, await tenantState(front.url, b.key));
    expect(conversation).toMatchObject({ channel: "whatsapp", ...stored(sent), message_count: 1 });
    expect(events).toEqual(["conversation.created"]);
    expect(messages.map((m) => m.body)).toEqual(["Hello"]);
    await expectReply(b, conversation.id, sent, "twilio");
  });

  it.each(messagingSenders.slice(0, 2))("whatsapp_cloud_from_%s_is_stored_with_its_event_and_answered_by_a_reply", async (_what, make) => {
    const sent = make();
    const waId = sent.replace(/^\+/, "");
    const before = await tenantState(front.url, a.key);
    const notification = whatsAppNotification(phoneNumberId, {
      contacts: [{ profile: { name: "Omar" }, wa_id: waId }],
      messages: [{ from: waId, id: `wamid.${hex32()}`, timestamp: "1763719200", type: "text", text: { body: "Hi there" } }],
    });
    expect(await postJson(`/api/webhooks/whatsapp/${phoneNumberId}`, notification, "x-hub-signature-256", (raw) => `sha256=${hmac(APP_SECRET)(raw)}`)).toEqual({
      status: 200,
      body: { received: true },
    });
    const { conversation, events, messages } = added(before, await tenantState(front.url, a.key));
    // A wa_id is a number without its `+`: a short one that is no number is kept as Meta sent it.
    expect(conversation).toMatchObject({ channel: "whatsapp", customer_name: "Omar", ...stored(sent), message_count: 1 });
    expect(events).toEqual(["conversation.created"]);
    expect(messages.map((m) => m.body)).toEqual(["Hi there"]);
    await expectReply(a, conversation.id, sent, "whatsapp_cloud");
  });

  const callers: Sender[] = [
    ["an_unallocated_number", unallocatedNumber],
    ["a_short_code", shortCode],
    ["an_alphanumeric_caller_id", alphanumeric],
  ];

  /** A call's conversation: stored as sent, with the call's events; a text reply on voice stays the 400 it always was. */
  async function expectCall(before: TenantState, sent: string, expectedEvents: string[]) {
    const after = await tenantState(front.url, a.key);
    const { conversation, events, calls } = added(before, after);
    expect(conversation).toMatchObject({ channel: "voice", ...stored(sent) });
    expect(events).toEqual(expectedEvents);
    expect(calls).toHaveLength(1);
    expect((await reply(a.key, conversation.id)).status).toBe(400);
    return calls[0];
  }

  it.each(callers)("twilio_voice_missed_call_from_%s_is_stored_with_its_events", async (_what, make) => {
    const sent = make();
    const before = await tenantState(front.url, a.key);
    const params = {
      CallSid: `CA${hex32()}`,
      AccountSid: accountSid,
      From: sent,
      To: twilioVoice,
      CallStatus: "no-answer",
      Direction: "inbound",
      Timestamp: "Sat, 21 Nov 2026 10:00:30 +0000",
    };
    expect(await postTwilio("/api/webhooks/twilio/voice", params)).toEqual({ status: 200, body: EMPTY_TWIML });
    const call = await expectCall(before, sent, ["conversation.created", "call.started", "call.missed"]);
    expect(call).toMatchObject({ provider: "twilio", status: "missed" });
  });

  it.each(callers)("retell_call_from_%s_is_stored_with_its_events_and_transcript", async (_what, make) => {
    const sent = make();
    const start = Date.UTC(2026, 10, 21, 9, 0, 0);
    const call = { call_id: `call_${hex32()}`, direction: "inbound", from_number: sent, to_number: retellNumber, start_timestamp: start };
    const before = await tenantState(front.url, a.key);
    const post = (event: string, body: object) =>
      postJson("/api/webhooks/retell", { event, call: body }, "x-retell-signature", (raw) => retellSign(raw, RETELL_KEY));
    expect(await post("call_started", call)).toEqual({ status: 200, body: { received: true } });
    const transcript = [
      { role: "agent", content: "Marina Homes, how can I help?", words: [{ start: 0.5 }] },
      { role: "user", content: "Call me back please.", words: [{ start: 3 }] },
    ];
    const end = { ...call, call_status: "ended", end_timestamp: start + 30_000, disconnection_reason: "user_hangup", transcript_object: transcript };
    expect(await post("call_ended", end)).toEqual({ status: 200, body: { received: true } });
    const stored = await expectCall(before, sent, ["conversation.created", "call.started", "call.completed"]);
    expect(stored).toMatchObject({ provider: "retell", status: "completed", duration_seconds: 30 });
    const messages = (await tenantState(front.url, a.key)).messages.filter((m) => m.conversation_id === stored.conversation_id);
    expect(messages.map((m) => [m.author, m.body])).toEqual([
      ["assistant", "Marina Homes, how can I help?"],
      ["customer", "Call me back please."],
    ]);
  });

  it.each(callers)("vapi_call_from_%s_is_stored_with_its_events", async (_what, make) => {
    const sent = make();
    const start = Date.UTC(2026, 10, 21, 9, 0, 0);
    const call = {
      id: `vapi-${hex32()}`,
      type: "inboundPhoneCall",
      startedAt: new Date(start).toISOString(),
      customer: { number: sent },
      phoneNumber: { number: vapiNumber },
    };
    const message = (extra: object) => ({ message: { timestamp: start, call, customer: call.customer, phoneNumber: call.phoneNumber, ...extra } });
    const post = (body: object) => postJson("/api/webhooks/vapi", body, "x-vapi-signature", hmac(VAPI_SECRET));
    const before = await tenantState(front.url, a.key);
    expect(await post(message({ type: "status-update", status: "in-progress" }))).toEqual({ status: 200, body: { received: true } });
    const report = message({
      type: "end-of-call-report",
      endedReason: "customer-ended-call",
      startedAt: new Date(start).toISOString(),
      endedAt: new Date(start + 20_000).toISOString(),
      artifact: { messages: [{ role: "bot", message: "Marina Homes, hello.", secondsFromStart: 0.5 }] },
    });
    expect(await post(report)).toEqual({ status: 200, body: { received: true } });
    const stored = await expectCall(before, sent, ["conversation.created", "call.started", "call.completed"]);
    expect(stored).toMatchObject({ provider: "vapi", status: "completed", duration_seconds: 20 });
  });

  it("a_blank_sender_is_still_a_400_naming_the_field_and_stores_nothing", async () => {
    const before = await tenantState(front.url, a.key);
    const params = { MessageSid: `SM${hex32()}`, AccountSid: accountSid, From: " ", To: sms, Body: "x" };
    expect(await postTwilio("/api/webhooks/twilio/messaging", params)).toEqual({
      status: 400,
      body: JSON.stringify({ error: { code: "bad_request", message: "missing required field 'From'" } }),
    });
    const notification = whatsAppNotification(phoneNumberId, { messages: [{ from: "", id: `wamid.${hex32()}`, type: "text", text: { body: "x" } }] });
    expect(await postJson(`/api/webhooks/whatsapp/${phoneNumberId}`, notification, "x-hub-signature-256", (raw) => `sha256=${hmac(APP_SECRET)(raw)}`)).toEqual({
      status: 400,
      body: { error: { code: "bad_request", message: "invalid field 'entry[0].changes[0].value.messages[0].from': must not be blank" } },
    });
    expect(await tenantState(front.url, a.key)).toEqual(before);
  });
});
