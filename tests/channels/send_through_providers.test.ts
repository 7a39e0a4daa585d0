// POST /api/v1/conversations/{id}/send on a conversation whose channel has a connection sends
// through that provider: the Twilio Messages API (SMS, WhatsApp through Twilio) or the WhatsApp
// Cloud messages API, each a local fake that checks credentials and body shape as the real API
// does. The provider's message id is stored, so its delivery reports (signed, through the real
// receivers) move the message to delivered or failed with one outbound.failed. A provider's
// refusal, a wrong credential or a timeout ends the message failed with one outbound.failed.
// Everything over real HTTP against a real front process on this worker's database.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../scripts/bench/services";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { connectChannel } from "../../server/channels/channel-connections";
import { OPERATOR } from "../../server/audit/record-audit";
import { tenantWithKey } from "../helpers/api";
import { uniquePhone } from "../helpers/conversations";
import { startReceiverFront } from "../helpers/receiver-front";
import { uniqueBusinessNumber, whatsAppNotification } from "./fixtures";
import { startFakeGraph, startFakeTwilio } from "./fake-providers";
import { eventTypes, tenantState } from "./receivers/api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const GRAPH_VERSION = "v23.0";
const TOKEN = "twilio-auth-token-of-the-sender-1";
const ACCESS_TOKEN = "EAAG-whatsapp-access-token-of-the-sender";
const APP_SECRET = "whatsapp-app-secret-of-the-sender";

let seq = 0;
const accountSid = () => `AC${(Date.now().toString(16) + process.pid.toString(16) + (++seq).toString(16)).padStart(32, "0").slice(-32)}`;
const phoneNumberId = () => `${Date.now()}${process.pid}${++seq}`.slice(-15);

type Tenant = { tenantId: string; key: string };

async function connect(tenantId: string, input: Parameters<typeof connectChannel>[1]) {
  await connectChannel(scopeToTenant((await openDatabase()).prisma, tenantId), input, OPERATOR);
}

describe("sending through the connected provider (real HTTP, fake provider APIs)", { timeout: 120_000 }, () => {
  const sms = { sid: accountSid(), number: uniqueBusinessNumber() };
  const twilioWhatsApp = { sid: accountSid(), number: uniqueBusinessNumber() };
  const wrongToken = { sid: accountSid(), number: uniqueBusinessNumber() };
  const cloud = { phoneNumberId: phoneNumberId() };
  const invalidTo = uniquePhone();
  const slowTo = uniquePhone();
  const notAllowed = uniquePhone();
  let twilio: Awaited<ReturnType<typeof startFakeTwilio>>;
  let graph: Awaited<ReturnType<typeof startFakeGraph>>;
  let front: Running;
  let a: Tenant; // Twilio SMS + WhatsApp Cloud
  let b: Tenant; // WhatsApp through Twilio
  let c: Tenant; // a Twilio connection whose stored auth token Twilio refuses
  let d: Tenant; // no connection

  beforeAll(async () => {
    twilio = await startFakeTwilio({
      accounts: [
        { sid: sms.sid, token: TOKEN, numbers: [sms.number] },
        { sid: twilioWhatsApp.sid, token: TOKEN, numbers: [twilioWhatsApp.number] },
        { sid: wrongToken.sid, token: "the-token-twilio-has-now", numbers: [wrongToken.number] },
      ],
      invalidTo: new Set([invalidTo]),
      slowTo: new Set([slowTo]),
      slowMs: 4000,
    });
    graph = await startFakeGraph({ version: GRAPH_VERSION, numbers: [{ ...cloud, accessToken: ACCESS_TOKEN }], notAllowed: new Set([notAllowed.slice(1)]) });
    [a, b, c, d] = await Promise.all([tenantWithKey(), tenantWithKey(), tenantWithKey(), tenantWithKey()]);
    await connect(a.tenantId, { provider: "twilio", channel: "sms", address: sms.number, credentials: { account_sid: sms.sid, auth_token: TOKEN } });
    await connect(a.tenantId, {
      provider: "whatsapp_cloud",
      channel: "whatsapp",
      address: cloud.phoneNumberId,
      credentials: { app_secret: APP_SECRET, verify_token: "v", access_token: ACCESS_TOKEN },
    });
    await connect(b.tenantId, {
      provider: "twilio",
      channel: "whatsapp",
      address: twilioWhatsApp.number,
      credentials: { account_sid: twilioWhatsApp.sid, auth_token: TOKEN },
    });
    await connect(c.tenantId, {
      provider: "twilio",
      channel: "sms",
      address: wrongToken.number,
      credentials: { account_sid: wrongToken.sid, auth_token: "an-old-revoked-token" },
    });
    front = await startReceiverFront({
      PUBLIC_BASE_URL,
      TWILIO_API_BASE_URL: twilio.url,
      WHATSAPP_GRAPH_BASE_URL: graph.url,
      WHATSAPP_GRAPH_API_VERSION: GRAPH_VERSION,
      CHANNEL_PROVIDER_TIMEOUT_MS: "1500",
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

  /** A conversation with `customer` on `channel`, and the answer to sending it `text`. */
  async function send(tenant: Tenant, channel: string, customer: string, text = "Your viewing is confirmed for 10:00") {
    const created = await api(tenant.key, "POST", "/conversations", { channel, customer_identifier: customer });
    expect(created.status).toBe(201);
    const sent = await api(tenant.key, "POST", `/conversations/${created.body.id}/send`, { body: text });
    expect(sent.status).toBe(201);
    return { conversationId: created.body.id as string, message: sent.body };
  }

  /** A Twilio status callback for a message sent from `from`, signed with the account's token. */
  async function twilioStatus(params: Record<string, string>) {
    const path = "/api/webhooks/twilio/messaging";
    const res = await fetch(`${front.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(TOKEN, `${PUBLIC_BASE_URL}${path}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    return res.status;
  }

  /** A WhatsApp Cloud status notification, signed with the app secret. */
  async function cloudStatus(status: Record<string, unknown>) {
    const raw = JSON.stringify(whatsAppNotification(cloud.phoneNumberId, { statuses: [status] }));
    const res = await fetch(`${front.url}/api/webhooks/whatsapp/${cloud.phoneNumberId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${createHmac("sha256", APP_SECRET).update(raw).digest("hex")}` },
      body: raw,
    });
    return res.status;
  }

  const eventsFor = async (tenant: Tenant, messageId: string) =>
    (await tenantState(front.url, tenant.key)).events.filter((e) => e.data.object?.id === messageId);
  const statusOf = async (tenant: Tenant, conversationId: string, messageId: string) =>
    (await api(tenant.key, "GET", `/conversations/${conversationId}/messages`)).body.data.find((m: any) => m.id === messageId)?.status;

  it("201_an_sms_goes_through_the_twilio_messages_api_and_its_delivered_report_moves_it_to_delivered", async () => {
    const customer = uniquePhone();
    const { conversationId, message } = await send(a, "sms", customer);
    expect(message).toMatchObject({ direction: "outbound", author: "operator", status: "sent", body: "Your viewing is confirmed for 10:00" });

    const requests = twilio.forTo(customer);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe(`/2010-04-01/Accounts/${sms.sid}/Messages.json`);
    expect(requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`${sms.sid}:${TOKEN}`).toString("base64")}`);
    expect(Object.fromEntries(new URLSearchParams(requests[0]!.body))).toEqual({
      To: customer,
      From: sms.number,
      Body: "Your viewing is confirmed for 10:00",
      StatusCallback: `${PUBLIC_BASE_URL}/api/webhooks/twilio/messaging`,
    });
    const sid = twilio.sids.at(-1)!;
    const [sentEvent] = await eventsFor(a, message.id);
    expect(sentEvent).toMatchObject({
      event: "outbound.sent",
      data: { driver: "twilio", provider_message_id: sid, object: { id: message.id, status: "sent" } },
    });

    const report = { MessageSid: sid, AccountSid: sms.sid, From: sms.number, To: customer };
    expect(await twilioStatus({ ...report, MessageStatus: "sent" })).toBe(200);
    expect(await twilioStatus({ ...report, MessageStatus: "delivered" })).toBe(200);
    expect(await statusOf(a, conversationId, message.id)).toBe("delivered");
    // A late failure after delivery changes nothing.
    expect(await twilioStatus({ ...report, MessageStatus: "undelivered", ErrorCode: "30003" })).toBe(200);
    expect(await statusOf(a, conversationId, message.id)).toBe("delivered");
    expect((await eventsFor(a, message.id)).map((e) => e.event)).toEqual(["outbound.sent"]);
  });

  it("an_undelivered_report_delivered_3_times_at_once_ends_the_message_failed_with_one_outbound_failed", async () => {
    const customer = uniquePhone();
    const { conversationId, message } = await send(a, "sms", customer, "See you at the villa");
    const sid = twilio.sids.at(-1)!;
    const report = {
      MessageSid: sid,
      AccountSid: sms.sid,
      From: sms.number,
      To: customer,
      MessageStatus: "undelivered",
      ErrorCode: "30003",
      ErrorMessage: "Unreachable destination handset",
    };
    expect(await Promise.all([1, 2, 3].map(() => twilioStatus(report)))).toEqual([200, 200, 200]);
    expect(await statusOf(a, conversationId, message.id)).toBe("failed");
    const events = await eventsFor(a, message.id);
    expect(events.map((e) => e.event)).toEqual(["outbound.sent", "outbound.failed"]);
    expect(events[1].data).toMatchObject({
      driver: "twilio",
      error: "twilio error 30003: Unreachable destination handset",
      object: { id: message.id, status: "failed" },
    });
  });

  it("201_whatsapp_through_twilio_is_sent_between_whatsapp_addresses", async () => {
    const customer = uniquePhone();
    const { message } = await send(b, "whatsapp", customer, "Here is the brochure");
    expect(message.status).toBe("sent");
    const [request] = twilio.forTo(customer);
    expect(request!.url).toBe(`/2010-04-01/Accounts/${twilioWhatsApp.sid}/Messages.json`);
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toMatchObject({
      To: `whatsapp:${customer}`,
      From: `whatsapp:${twilioWhatsApp.number}`,
      Body: "Here is the brochure",
    });
  });

  it("201_a_whatsapp_message_goes_through_the_cloud_api_and_a_failed_status_ends_it_failed_once", async () => {
    const customer = uniquePhone();
    const { conversationId, message } = await send(a, "whatsapp", customer, "Can we confirm Tuesday?");
    expect(message.status).toBe("sent");
    const requests = graph.forTo(customer.slice(1));
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe(`/${GRAPH_VERSION}/${cloud.phoneNumberId}/messages`);
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
    expect(JSON.parse(requests[0]!.body)).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: customer.slice(1),
      type: "text",
      text: { preview_url: false, body: "Can we confirm Tuesday?" },
    });
    const [sentEvent] = await eventsFor(a, message.id);
    const wamid = sentEvent.data.provider_message_id as string;
    expect(wamid).toMatch(/^wamid\./);
    expect(sentEvent.data.driver).toBe("whatsapp_cloud");

    const failed = {
      id: wamid,
      status: "failed",
      timestamp: "1763719200",
      recipient_id: customer.slice(1),
      errors: [{ code: 131047, title: "Re-engagement message" }],
    };
    expect(await Promise.all([cloudStatus(failed), cloudStatus(failed)])).toEqual([200, 200]);
    expect(await statusOf(a, conversationId, message.id)).toBe("failed");
    const events = await eventsFor(a, message.id);
    expect(events.map((e) => e.event)).toEqual(["outbound.sent", "outbound.failed"]);
    expect(events[1].data).toMatchObject({ driver: "whatsapp_cloud", error: "whatsapp error 131047: Re-engagement message" });
  });

  it("201_a_providers_refusal_ends_the_message_failed_with_one_outbound_failed_naming_the_providers_error", async () => {
    const refusedSms = await send(a, "sms", invalidTo);
    expect(refusedSms.message.status).toBe("failed");
    const refusedWhatsApp = await send(a, "whatsapp", notAllowed);
    expect(refusedWhatsApp.message.status).toBe("failed");
    const wrongCredential = await send(c, "sms", uniquePhone());
    expect(wrongCredential.message.status).toBe("failed");

    const [smsEvents, whatsAppEvents, credentialEvents] = await Promise.all([
      eventsFor(a, refusedSms.message.id),
      eventsFor(a, refusedWhatsApp.message.id),
      eventsFor(c, wrongCredential.message.id),
    ]);
    expect(smsEvents.map((e) => [e.event, e.data.driver, e.data.error])).toEqual([
      ["outbound.failed", "twilio", `twilio responded 400: 21211 Invalid 'To' Phone Number: ${invalidTo}`],
    ]);
    expect(whatsAppEvents.map((e) => [e.event, e.data.driver, e.data.error])).toEqual([
      ["outbound.failed", "whatsapp_cloud", "whatsapp_cloud responded 400: 131030 (#131030) Recipient phone number not in allowed list"],
    ]);
    expect(credentialEvents.map((e) => [e.event, e.data.error])).toEqual([["outbound.failed", "twilio responded 401: 20003 Authenticate"]]);
    // The refused credential went to Twilio and nowhere else: not into the event, not back to the client.
    expect(JSON.stringify([credentialEvents, wrongCredential])).not.toContain("an-old-revoked-token");
  });

  it("201_a_provider_that_does_not_answer_within_the_timeout_fails_the_message_once", async () => {
    const { conversationId, message } = await send(a, "sms", slowTo);
    expect(message.status).toBe("failed");
    expect(await statusOf(a, conversationId, message.id)).toBe("failed");
    const events = await eventsFor(a, message.id);
    expect(events.map((e) => [e.event, e.data.error])).toEqual([["outbound.failed", "twilio timed out after 1500 ms"]]);
  });

  it("201_a_conversation_whose_channel_has_no_connection_goes_through_the_environments_driver", async () => {
    const before = twilio.received.length + graph.received.length;
    const { message } = await send(d, "sms", uniquePhone());
    expect(message.status).toBe("sent");
    expect(twilio.received.length + graph.received.length).toBe(before);
    const state = await tenantState(front.url, d.key);
    expect(eventTypes(state)).toEqual(["conversation.created", "outbound.sent"]);
    expect(state.events[1].data).toMatchObject({ driver: "record", provider_message_id: null });
  });
});
