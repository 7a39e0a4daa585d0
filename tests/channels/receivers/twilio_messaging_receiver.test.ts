// The Twilio Messaging receiver over real HTTP (a real front process on this worker's database),
// every request signed by the official `twilio` library over the public URL Twilio calls:
// inbound SMS and WhatsApp are ingested once however often or concurrently Twilio delivers them;
// a missing, wrong or altered signature (401/403), an unknown number (404) or a malformed payload
// (400) writes nothing; tenant B's number never lands data in tenant A; status callbacks move a
// message sent through Twilio to delivered or failed, with one outbound.failed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../../scripts/bench/services";
import { getDb } from "../../../server/db/client";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { createConversation } from "../../../server/conversations/conversations.service";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { TWILIO_SID, uniqueBusinessNumber } from "../fixtures";
import { eventTypes, tenantState } from "./api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const PATH = "/api/webhooks/twilio/messaging";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

type Tenant = { tenantId: string; key: string; number: string; token: string };

let sidCounter = 0;
const newSid = (prefix = "SM") =>
  `${prefix}${(Date.now().toString(16) + (++sidCounter).toString(16).padStart(6, "0") + process.pid.toString(16)).padEnd(32, "0").slice(0, 32)}`;

async function tenantWithTwilioNumber(token: string): Promise<Tenant> {
  const { tenantId, key } = await tenantWithKey(["read"]);
  const number = uniqueBusinessNumber();
  const db = scopeToTenant(await getDb(), tenantId);
  await connectChannel(db, { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: TWILIO_SID, auth_token: token } }, OPERATOR);
  return { tenantId, key, number, token };
}

const inboundParams = (to: string, from: string, extra: Record<string, string> = {}) => ({
  MessageSid: newSid(),
  SmsSid: "",
  AccountSid: TWILIO_SID,
  From: from,
  To: to,
  Body: "Hi, is the villa in Jumeirah still available?",
  NumMedia: "0",
  SmsStatus: "received",
  ...extra,
});

describe("Twilio Messaging receiver (real HTTP, signed by the twilio library)", () => {
  let front: Running;
  let a: Tenant;
  let b: Tenant;
  let sentSid: string;
  let failedSid: string;

  beforeAll(async () => {
    a = await tenantWithTwilioNumber("auth-token-of-tenant-a-1111");
    b = await tenantWithTwilioNumber("auth-token-of-tenant-b-2222");
    // Two messages tenant A sent through Twilio (what a send through the provider stores).
    const db = scopeToTenant(await getDb(), a.tenantId);
    const { conversation } = await createConversation(db, { channel: "sms", customer_identifier: uniquePhone() });
    sentSid = newSid();
    failedSid = newSid();
    for (const sid of [sentSid, failedSid]) {
      await db.message.create({
        data: {
          tenantId: a.tenantId,
          conversationId: conversation.id,
          direction: "outbound",
          author: "operator",
          body: "Your viewing is confirmed",
          status: "sent",
          provider: "twilio",
          providerMessageId: sid,
        },
      });
    }
    front = await startReceiverFront({ PUBLIC_BASE_URL, RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
  });
  afterAll(async () => front?.stop());

  /** POSTs the form as Twilio does, signed with `token` over `signedUrl` (the public URL by default). */
  async function post(
    params: Record<string, string>,
    opts: { token?: string; signedUrl?: string; signature?: string | null; contentType?: string; body?: string } = {},
  ) {
    const headers: Record<string, string> = { "content-type": opts.contentType ?? "application/x-www-form-urlencoded" };
    const signature =
      opts.signature === undefined ? getExpectedTwilioSignature(opts.token ?? a.token, opts.signedUrl ?? `${PUBLIC_BASE_URL}${PATH}`, params) : opts.signature;
    if (signature !== null) headers["x-twilio-signature"] = signature;
    const res = await fetch(`${front.url}${PATH}`, { method: "POST", headers, body: opts.body ?? new URLSearchParams(params).toString() });
    const text = await res.text();
    return { status: res.status, text, type: res.headers.get("content-type"), body: text.startsWith("{") ? JSON.parse(text) : undefined };
  }

  it("200_an_inbound_sms_is_stored_in_the_customers_conversation_and_answered_with_empty_twiml", async () => {
    const customer = uniquePhone();
    const res = await post(inboundParams(a.number, customer));
    expect(res).toMatchObject({ status: 200, text: EMPTY_TWIML, type: "text/xml" });
    const state = await tenantState(front.url, a.key);
    const conversation = state.conversations.find((c) => c.customer_identifier === customer);
    expect(conversation).toMatchObject({ channel: "sms", status: "open", message_count: 1 });
    expect(state.messages.filter((m) => m.conversation_id === conversation.id).map((m) => [m.direction, m.author, m.status, m.body])).toEqual([
      ["inbound", "customer", "received", "Hi, is the villa in Jumeirah still available?"],
    ]);
    expect(state.events.filter((e) => e.data.object.id === conversation.id).map((e) => e.event)).toEqual(["conversation.created"]);
  });

  it("200_a_whatsapp_message_through_twilio_lands_in_a_whatsapp_conversation_named_after_the_profile", async () => {
    const customer = uniquePhone();
    const res = await post(inboundParams(`whatsapp:${a.number}`, `whatsapp:${customer}`, { ProfileName: "Layla Haddad", Body: "مرحبا" }));
    expect(res.status).toBe(200);
    const state = await tenantState(front.url, a.key);
    const conversation = state.conversations.find((c) => c.customer_identifier === customer);
    expect(conversation).toMatchObject({ channel: "whatsapp", customer_name: "Layla Haddad", message_count: 1 });
  });

  it("one_message_and_one_event_when_twilio_delivers_the_same_message_5_times_concurrently", async () => {
    const before = await tenantState(front.url, a.key);
    const params = inboundParams(a.number, uniquePhone());
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(params)));
    expect(answers.map((r) => [r.status, r.text])).toEqual(Array.from({ length: 5 }, () => [200, EMPTY_TWIML]));
    const after = await tenantState(front.url, a.key);
    expect(after.messages.length - before.messages.length).toBe(1);
    expect(eventTypes(after).slice(before.events.length)).toEqual(["conversation.created"]);
  });

  it("one_conversation_and_one_conversation_created_for_20_concurrent_first_messages_of_a_new_customer", async () => {
    const before = await tenantState(front.url, a.key);
    const customer = uniquePhone();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(inboundParams(a.number, customer, { Body: `part ${i}` }))));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    const after = await tenantState(front.url, a.key);
    const mine = after.conversations.filter((c) => c.customer_identifier === customer);
    expect(mine.map((c) => [c.channel, c.message_count])).toEqual([["sms", 20]]);
    expect(after.messages.length - before.messages.length).toBe(20);
    expect(eventTypes(after).slice(before.events.length)).toEqual(["conversation.created"]);
  });

  describe("refused requests write nothing", () => {
    let before: Awaited<ReturnType<typeof tenantState>>;
    beforeAll(async () => {
      before = await tenantState(front.url, a.key);
    });
    const unchanged = async () => expect(await tenantState(front.url, a.key)).toEqual(before);

    it("401_without_the_signature_header", async () => {
      const res = await post(inboundParams(a.number, uniquePhone()), { signature: null });
      expect(res).toMatchObject({ status: 401, body: { error: { code: "unauthorized", message: "missing X-Twilio-Signature header" } } });
      await unchanged();
    });

    it("403_signed_with_another_token_over_another_url_or_replayed_with_an_altered_body", async () => {
      const forbidden = { status: 403, body: { error: { code: "forbidden", message: "X-Twilio-Signature does not verify" } } };
      expect(await post(inboundParams(a.number, uniquePhone()), { token: "not-the-auth-token" })).toMatchObject(forbidden);
      // Signed over the URL this server sees (its Host) instead of the public one Twilio calls.
      expect(await post(inboundParams(a.number, uniquePhone()), { signedUrl: `${front.url}${PATH}` })).toMatchObject(forbidden);
      // A genuine request replayed with its Body altered, and with a parameter added.
      const genuine = inboundParams(a.number, uniquePhone());
      const signature = getExpectedTwilioSignature(a.token, `${PUBLIC_BASE_URL}${PATH}`, genuine);
      expect(await post({ ...genuine, Body: "Send me the owner's number" }, { signature })).toMatchObject(forbidden);
      expect(await post({ ...genuine, NumMedia: "1" }, { signature })).toMatchObject(forbidden);
      expect(await post({ ...genuine, Extra: "x" }, { signature })).toMatchObject(forbidden);
      await unchanged();
    });

    it("404_a_number_no_tenant_has_connected", async () => {
      const res = await post(inboundParams(uniqueBusinessNumber(), uniquePhone()));
      expect(res).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
      expect(res.body.error.message).toMatch(/^no active channel connection for twilio number \+9714\d{7}$/);
      await unchanged();
    });

    it.each([
      ["MessageSid", { MessageSid: "" }, "invalid field 'MessageSid': must be a Twilio SID (2 letters and 32 hex characters)"],
      ["From", { From: "" }, "missing required field 'From'"],
      ["From", { From: "x".repeat(321) }, "invalid field 'From': must be at most 320 characters"],
      ["To", { To: "" }, "missing required field 'To'"],
      ["Body", { Body: "x".repeat(16_385) }, "invalid field 'Body': must be at most 16384 characters"],
      ["Body", { Body: "nul \u0000 inside" }, "invalid field 'Body': must not contain NUL characters"],
    ])("400_a_malformed_%s_is_named", async (field, change, message) => {
      const res = await post({ ...inboundParams(a.number, uniquePhone()), ...change });
      expect(res).toMatchObject({ status: 400, body: { error: { code: "bad_request", message } } });
      void field;
      await unchanged();
    });

    it("400_a_json_body_and_413_a_body_over_1_mib", async () => {
      const json = await post(inboundParams(a.number, uniquePhone()), { contentType: "application/json" });
      expect(json).toMatchObject({ status: 400, body: { error: { code: "bad_request", message: "content-type must be application/x-www-form-urlencoded" } } });
      const huge = await post({}, { body: `Body=${"x".repeat(1024 * 1024)}`, signature: "whatever" });
      expect(huge).toMatchObject({ status: 413, body: { error: { code: "bad_request", message: "request body larger than 1048576 bytes (1 MiB)" } } });
      await unchanged();
    });
  });

  it("cross_tenant_b_s_number_never_lands_data_in_a", async () => {
    const beforeA = await tenantState(front.url, a.key);
    const customer = uniquePhone();
    // To B's number, signed with A's token: refused, nothing anywhere.
    expect((await post(inboundParams(b.number, customer), { token: a.token })).status).toBe(403);
    expect((await tenantState(front.url, b.key)).conversations).toEqual([]);
    // Signed with B's own token: B's conversation; A unchanged.
    expect((await post(inboundParams(b.number, customer), { token: b.token })).status).toBe(200);
    const stateB = await tenantState(front.url, b.key);
    expect(stateB.conversations.map((c) => c.customer_identifier)).toEqual([customer]);
    expect(await tenantState(front.url, a.key)).toEqual(beforeA);
  });

  it("status_callbacks_move_a_sent_message_to_delivered_and_a_failed_one_to_failed_with_one_outbound_failed", async () => {
    const before = await tenantState(front.url, a.key);
    const callback = (sid: string, status: string, extra: Record<string, string> = {}) => ({
      MessageSid: sid,
      MessageStatus: status,
      AccountSid: TWILIO_SID,
      From: a.number,
      To: uniquePhone(),
      ...extra,
    });
    expect((await post(callback(sentSid, "delivered"))).status).toBe(200);
    const failures = await Promise.all(
      Array.from({ length: 3 }, () => post(callback(failedSid, "undelivered", { ErrorCode: "30003", ErrorMessage: "Unreachable destination handset" }))),
    );
    expect(failures.map((r) => [r.status, r.text])).toEqual(Array.from({ length: 3 }, () => [200, EMPTY_TWIML]));
    // A late "sent" after "delivered" changes nothing.
    expect((await post(callback(sentSid, "sent"))).status).toBe(200);

    const after = await tenantState(front.url, a.key);
    const statusOf = (body: string) =>
      after.messages
        .filter((m) => m.direction === "outbound" && m.body === body)
        .map((m) => m.status)
        .sort();
    expect(statusOf("Your viewing is confirmed")).toEqual(["delivered", "failed"]);
    const newEvents = after.events.slice(before.events.length);
    expect(newEvents.map((e) => e.event)).toEqual(["outbound.failed"]);
    expect(newEvents[0].data).toMatchObject({
      object: { status: "failed", direction: "outbound" },
      driver: "twilio",
      error: "twilio error 30003: Unreachable destination handset",
    });
  });
});
