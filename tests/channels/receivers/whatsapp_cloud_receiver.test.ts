// The WhatsApp Cloud API receiver over real HTTP (a real front process on this worker's database).
// Meta publishes no server library for its signature, so requests are signed by the documented
// algorithm (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>):
// the GET handshake echoes the challenge only with the connection's verify token; messages are
// ingested once however often Meta redelivers them; statuses move sent messages; a missing, wrong
// or altered signature (401/403), an unknown phone_number_id (404) or a malformed payload (400)
// writes nothing; tenant B's number never lands data in tenant A.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../../scripts/bench/services";
import { getDb } from "../../../server/db/client";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { createConversation } from "../../../server/conversations/conversations.service";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { whatsAppNotification } from "../fixtures";
import { eventTypes, tenantState } from "./api-reader";

type Tenant = { tenantId: string; key: string; phoneNumberId: string; appSecret: string; verifyToken: string };
let idSeq = 0;
const uniqueId = () => `${Date.now()}${process.pid}${++idSeq}`.slice(-15);

async function tenantWithWhatsApp(appSecret: string): Promise<Tenant> {
  const { tenantId, key } = await tenantWithKey(["read"]);
  const phoneNumberId = uniqueId();
  const verifyToken = `verify-${phoneNumberId}`;
  await connectChannel(
    scopeToTenant(await getDb(), tenantId),
    {
      provider: "whatsapp_cloud",
      channel: "whatsapp",
      address: phoneNumberId,
      credentials: { app_secret: appSecret, verify_token: verifyToken, access_token: "EAAG-access-token" },
    },
    OPERATOR,
  );
  return { tenantId, key, phoneNumberId, appSecret, verifyToken };
}

const waId = (e164: string) => e164.slice(1);

function textMessage(from: string, body: string, id = `wamid.${uniqueId()}`) {
  return { from: waId(from), id, timestamp: "1763719200", type: "text", text: { body } };
}

describe("WhatsApp Cloud receiver (real HTTP, documented signature)", () => {
  let front: Running;
  let a: Tenant;
  let b: Tenant;
  const sentId = `wamid.sent${uniqueId()}`;
  const failedId = `wamid.failed${uniqueId()}`;

  beforeAll(async () => {
    a = await tenantWithWhatsApp("app-secret-of-tenant-a");
    b = await tenantWithWhatsApp("app-secret-of-tenant-b");
    const db = scopeToTenant(await getDb(), a.tenantId);
    const { conversation } = await createConversation(db, { channel: "whatsapp", customer_identifier: uniquePhone() });
    for (const id of [sentId, failedId]) {
      await db.message.create({
        data: {
          tenantId: a.tenantId,
          conversationId: conversation.id,
          direction: "outbound",
          author: "operator",
          body: "See you Tuesday",
          status: "sent",
          provider: "whatsapp_cloud",
          providerMessageId: id,
        },
      });
    }
    front = await startReceiverFront({ RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
  });
  afterAll(async () => front?.stop());

  const sign = (raw: string, secret: string) => `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;
  async function post(phoneNumberId: string, body: unknown, opts: { secret?: string; signature?: string | null; raw?: string } = {}) {
    const raw = opts.raw ?? JSON.stringify(body);
    const headers: Record<string, string> = { "content-type": "application/json" };
    const signature = opts.signature === undefined ? sign(raw, opts.secret ?? a.appSecret) : opts.signature;
    if (signature !== null) headers["x-hub-signature-256"] = signature;
    const res = await fetch(`${front.url}/api/webhooks/whatsapp/${phoneNumberId}`, { method: "POST", headers, body: raw });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const handshake = (phoneNumberId: string, query: Record<string, string>) =>
    fetch(`${front.url}/api/webhooks/whatsapp/${phoneNumberId}?${new URLSearchParams(query)}`);

  it("200_the_handshake_echoes_the_challenge_with_the_verify_token_and_403_without_it", async () => {
    const ok = await handshake(a.phoneNumberId, { "hub.mode": "subscribe", "hub.verify_token": a.verifyToken, "hub.challenge": "1158201444" });
    expect([ok.status, ok.headers.get("content-type"), await ok.text()]).toEqual([200, "text/plain", "1158201444"]);
    const wrong = await handshake(a.phoneNumberId, { "hub.mode": "subscribe", "hub.verify_token": b.verifyToken, "hub.challenge": "1158201444" });
    expect([wrong.status, await wrong.json()]).toEqual([403, { error: { code: "forbidden", message: "hub.verify_token does not match" } }]);
    const unknown = await handshake(uniqueId(), { "hub.mode": "subscribe", "hub.verify_token": a.verifyToken, "hub.challenge": "1" });
    expect(unknown.status).toBe(404);
    const mode = await handshake(a.phoneNumberId, { "hub.mode": "unsubscribe", "hub.verify_token": a.verifyToken, "hub.challenge": "1" });
    expect([mode.status, (await mode.json()).error.message]).toEqual([400, "invalid field 'hub.mode': must be subscribe"]);
  });

  it("200_a_text_message_is_stored_in_the_customers_whatsapp_conversation_named_after_the_profile", async () => {
    const customer = uniquePhone();
    const res = await post(
      a.phoneNumberId,
      whatsAppNotification(a.phoneNumberId, {
        contacts: [{ profile: { name: "Omar Khalil" }, wa_id: waId(customer) }],
        messages: [textMessage(customer, "Do you have a 3-bedroom in Arabian Ranches?")],
      }),
    );
    expect(res).toEqual({ status: 200, body: { received: true } });
    const state = await tenantState(front.url, a.key);
    const conversation = state.conversations.find((c) => c.customer_identifier === customer);
    expect(conversation).toMatchObject({ channel: "whatsapp", customer_name: "Omar Khalil", message_count: 1 });
    expect(state.messages.filter((m) => m.conversation_id === conversation.id).map((m) => [m.author, m.status, m.body])).toEqual([
      ["customer", "received", "Do you have a 3-bedroom in Arabian Ranches?"],
    ]);
  });

  it("one_message_and_one_event_when_meta_redelivers_a_notification_5_times_concurrently", async () => {
    const before = await tenantState(front.url, a.key);
    const body = whatsAppNotification(a.phoneNumberId, { messages: [textMessage(uniquePhone(), "Hello?")] });
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(a.phoneNumberId, body)));
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
    const after = await tenantState(front.url, a.key);
    expect(after.messages.length - before.messages.length).toBe(1);
    expect(eventTypes(after).slice(before.events.length)).toEqual(["conversation.created"]);
  });

  it("statuses_move_a_sent_message_to_delivered_and_a_failed_one_to_failed_with_one_outbound_failed", async () => {
    const before = await tenantState(front.url, a.key);
    const status = (id: string, s: string, extra: Record<string, unknown> = {}) => ({
      id,
      status: s,
      timestamp: "1763719260",
      recipient_id: "971501234567",
      ...extra,
    });
    expect(
      (await post(a.phoneNumberId, whatsAppNotification(a.phoneNumberId, { statuses: [status(sentId, "delivered"), status(sentId, "read")] }))).status,
    ).toBe(200);
    const failed = whatsAppNotification(a.phoneNumberId, {
      statuses: [status(failedId, "failed", { errors: [{ code: 131026, title: "Message undeliverable" }] })],
    });
    expect((await Promise.all([post(a.phoneNumberId, failed), post(a.phoneNumberId, failed)])).map((r) => r.status)).toEqual([200, 200]);
    const after = await tenantState(front.url, a.key);
    expect(
      after.messages
        .filter((m) => m.body === "See you Tuesday")
        .map((m) => m.status)
        .sort(),
    ).toEqual(["delivered", "failed"]);
    const added = after.events.slice(before.events.length);
    expect(added.map((e) => [e.event, e.data.driver, e.data.error])).toEqual([
      ["outbound.failed", "whatsapp_cloud", "whatsapp error 131026: Message undeliverable"],
    ]);
  });

  describe("refused requests write nothing", () => {
    let before: Awaited<ReturnType<typeof tenantState>>;
    beforeAll(async () => {
      before = await tenantState(front.url, a.key);
    });
    const unchanged = async () => expect(await tenantState(front.url, a.key)).toEqual(before);
    const message = () => whatsAppNotification(a.phoneNumberId, { messages: [textMessage(uniquePhone(), "hi")] });

    it("401_without_the_signature_header", async () => {
      expect(await post(a.phoneNumberId, message(), { signature: null })).toEqual({
        status: 401,
        body: { error: { code: "unauthorized", message: "missing X-Hub-Signature-256 header" } },
      });
      await unchanged();
    });

    it("403_signed_with_another_app_secret_or_replayed_with_an_altered_body", async () => {
      const forbidden = { status: 403, body: { error: { code: "forbidden", message: "X-Hub-Signature-256 does not verify" } } };
      expect(await post(a.phoneNumberId, message(), { secret: b.appSecret })).toEqual(forbidden);
      const raw = JSON.stringify(message());
      const signature = sign(raw, a.appSecret);
      expect(await post(a.phoneNumberId, undefined, { raw: raw.replace('"hi"', '"hi!"'), signature })).toEqual(forbidden);
      expect(await post(a.phoneNumberId, undefined, { raw: `${raw} `, signature })).toEqual(forbidden);
      expect(await post(a.phoneNumberId, undefined, { raw, signature: "sha256=zz" })).toEqual(forbidden);
      await unchanged();
    });

    it("404_a_phone_number_id_no_tenant_has_connected", async () => {
      const other = uniqueId();
      const res = await post(other, whatsAppNotification(other, { messages: [textMessage(uniquePhone(), "hi")] }));
      expect(res).toEqual({
        status: 404,
        body: { error: { code: "not_found", message: `no active channel connection for whatsapp_cloud phone_number_id ${other}` } },
      });
      await unchanged();
    });

    it.each([
      ["malformed JSON", () => '{"object":', "malformed JSON body"],
      ["another object", () => JSON.stringify({ ...message(), object: "page" }), "invalid field 'object': must be whatsapp_business_account"],
      [
        "no message id",
        () => JSON.stringify(whatsAppNotification(a.phoneNumberId, { messages: [{ ...textMessage(uniquePhone(), "hi"), id: undefined }] })),
        "missing required field 'entry[0].changes[0].value.messages[0].id'",
      ],
      [
        // Any other sender is stored (tests/channels/receivers/verified_senders_are_stored_whatever_their_format.test.ts).
        "a blank sender",
        () =>
          JSON.stringify(
            whatsAppNotification(a.phoneNumberId, { messages: [textMessage(uniquePhone(), "hi"), { ...textMessage(uniquePhone(), "x"), from: " " }] }),
          ),
        "invalid field 'entry[0].changes[0].value.messages[1].from': must not be blank",
      ],
      [
        "another number's change",
        () => JSON.stringify(whatsAppNotification(b.phoneNumberId, { messages: [textMessage(uniquePhone(), "hi")] })),
        () => `invalid field 'entry[0].changes[0].value.metadata.phone_number_id': not the phone_number_id of this callback URL (${a.phoneNumberId})`,
      ],
    ])("400_%s_is_named_and_nothing_of_the_notification_is_stored", async (_what, raw, message) => {
      const res = await post(a.phoneNumberId, undefined, { raw: raw() });
      expect(res).toEqual({ status: 400, body: { error: { code: "bad_request", message: typeof message === "function" ? message() : message } } });
      await unchanged();
    });
  });

  it("cross_tenant_b_s_number_never_lands_data_in_a", async () => {
    const beforeA = await tenantState(front.url, a.key);
    const body = whatsAppNotification(b.phoneNumberId, { messages: [textMessage(uniquePhone(), "for B")] });
    expect((await post(b.phoneNumberId, body, { secret: a.appSecret })).status).toBe(403);
    expect((await tenantState(front.url, b.key)).conversations).toEqual([]);
    expect((await post(b.phoneNumberId, body, { secret: b.appSecret })).status).toBe(200);
    expect((await tenantState(front.url, b.key)).messages.map((m) => m.body)).toEqual(["for B"]);
    expect(await tenantState(front.url, a.key)).toEqual(beforeA);
  });
});
