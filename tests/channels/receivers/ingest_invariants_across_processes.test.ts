// Ingest's invariants with two real receiver processes on one PostgreSQL, both of which cache the
// channel connection (server/channels/channel-connections.ts) and store a message in one statement
// that checks it (server/conversations/ingest.ts):
//   - new customers whose first messages reach both processes at once, every message delivered to
//     both: one conversation and one `conversation.created` (with its delivery) per customer, each
//     provider message id stored once, every message counted, nothing lost;
//   - a connection disabled through one process is refused by the other at once, under load: no
//     request that starts after the change is stored, and every 200 answered is a stored message;
//   - credentials replaced through one process: the other, whose cache holds the old ones, refuses
//     every request signed with them from then on (403, nothing stored) and accepts the new ones.
// PostgreSQL only (the embedded database takes one process).
import { describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../../scripts/bench/services";
import { openDatabase } from "../../../server/db/database";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { userInTenant } from "../../helpers/dashboard";
import { uniquePhone } from "../../helpers/conversations";
import { signInOverHttp, trpcOverHttp } from "../../dashboard/http-session";
import { TWILIO_SID, uniqueBusinessNumber } from "../fixtures";
import { expectRefusedAtOnceUnderLoad, type Sent, twoReceiverFronts } from "./change-under-load";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const PATH = "/api/webhooks/twilio/messaging";
const TOKEN = "auth-token-of-the-invariants-4b2e";
const NEW_TOKEN = "auth-token-replaced-9c77";

let sidCounter = 0;
const newSid = () => `SM${(Date.now().toString(16) + (++sidCounter).toString(16).padStart(6, "0") + process.pid.toString(16)).padEnd(32, "0").slice(0, 32)}`;

describe.runIf(process.env.DATABASE_URL)("ingest invariants across two receiver processes", () => {
  const fronts = twoReceiverFronts(PUBLIC_BASE_URL);
  let cookie: string;

  /** A tenant with a Twilio connection at a new number (and a subscription to new conversations), and a dashboard session on front 0. */
  async function connectedTenant() {
    const tenant = await tenantWithKey(["read"]);
    const number = uniqueBusinessNumber();
    const db = scopeToTenant((await openDatabase()).prisma, tenant.tenantId);
    const { id } = await connectChannel(
      db,
      { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: TWILIO_SID, auth_token: TOKEN } },
      OPERATOR,
    );
    await (await openDatabase()).prisma.webhookSubscription.create({
      data: {
        tenantId: tenant.tenantId,
        targetUrl: "https://consumer.example/hooks",
        secretEncrypted: "unused",
        secretPrefix: "whsec_t",
        events: ["conversation.created"],
      },
    });
    cookie = await signInOverHttp(fronts[0]!.url, await userInTenant(tenant.tenantId, "admin"));
    return { tenantId: tenant.tenantId, number, connectionId: id };
  }

  /** An inbound SMS signed with `token` as Twilio signs it; its status and when it was sent. */
  async function post(front: Running, to: string, message: { sid: string; from: string; body: string }, token = TOKEN): Promise<Sent> {
    const params = { MessageSid: message.sid, AccountSid: TWILIO_SID, From: message.from, To: to, Body: message.body, SmsStatus: "received" };
    const startedAt = performance.now();
    const res = await fetch(`${front.url}${PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(token, `${PUBLIC_BASE_URL}${PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    await res.text();
    return { id: message.sid, status: res.status, startedAt };
  }

  async function storedSids(tenantId: string): Promise<string[]> {
    const rows = await (await openDatabase()).prisma.message.findMany({ where: { tenantId }, select: { providerMessageId: true } });
    return rows.map((r) => r.providerMessageId!).sort();
  }

  /** A message from a new customer to `number` through `front`. */
  const fromNewCustomer = (front: Running, number: string) => () => post(front, number, { sid: newSid(), from: uniquePhone(), body: "still free?" });

  it("new_customers_first_messages_through_two_processes_one_conversation_and_one_created_event_each_every_message_once", async () => {
    const { tenantId, number } = await connectedTenant();
    const customers = Array.from({ length: 30 }, () => uniquePhone());
    const messages = customers.flatMap((from, c) => Array.from({ length: 4 }, (_, i) => ({ sid: newSid(), from, body: `customer ${c} message ${i}` })));
    // Every message delivered to both processes at once (a provider's retry racing the first delivery).
    const answers = await Promise.all(messages.flatMap((m) => fronts.map((front) => post(front, number, m))));
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);

    const db = (await openDatabase()).prisma;
    const conversations = await db.conversation.findMany({ where: { tenantId }, select: { id: true, customerIdentifier: true, messageCount: true } });
    expect(conversations.map((c) => [c.customerIdentifier, c.messageCount]).sort()).toEqual(customers.map((c) => [c, 4]).sort());
    const created = await db.event.findMany({ where: { tenantId, type: "conversation.created" }, select: { id: true, data: true } });
    expect(created.map((e) => (e.data as { object: { id: string } }).object.id).sort()).toEqual(conversations.map((c) => c.id).sort());
    expect(await db.webhookDelivery.count({ where: { tenantId, eventId: { in: created.map((e) => e.id) } } })).toBe(30);
    expect(await storedSids(tenantId)).toEqual(messages.map((m) => m.sid).sort());
  }, 120_000);

  it("a_connection_disabled_through_one_process_is_refused_by_the_other_at_once_under_load", async () => {
    const { tenantId, number, connectionId } = await connectedTenant();
    // Both processes have the connection cached.
    for (const front of fronts) expect((await post(front, number, { sid: newSid(), from: uniquePhone(), body: "hi" })).status).toBe(200);
    await expectRefusedAtOnceUnderLoad({
      send: fromNewCustomer(fronts[1]!, number),
      workers: 6,
      change: () => trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", { id: connectionId, status: "disabled" }),
      refusedWith: 404,
      stored: () => storedSids(tenantId),
      warmups: 2,
    });
  }, 120_000);

  it("credentials_replaced_through_one_process_the_other_refuses_the_old_signature_at_once_under_load_and_stores_nothing_it_refused", async () => {
    const { tenantId, number, connectionId } = await connectedTenant();
    for (const front of fronts) expect((await post(front, number, { sid: newSid(), from: uniquePhone(), body: "hi" })).status).toBe(200);
    await expectRefusedAtOnceUnderLoad({
      send: fromNewCustomer(fronts[1]!, number),
      workers: 6,
      change: () =>
        trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", {
          id: connectionId,
          credentials: { account_sid: TWILIO_SID, auth_token: NEW_TOKEN },
        }),
      refusedWith: 403,
      stored: () => storedSids(tenantId),
      warmups: 2,
    });
    // The new credentials are accepted by both processes.
    for (const front of fronts) expect((await post(front, number, { sid: newSid(), from: uniquePhone(), body: "hi" }, NEW_TOKEN)).status).toBe(200);
  }, 120_000);
});
