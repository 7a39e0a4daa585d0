// The call receivers' invariants with two real receiver processes on one PostgreSQL, both of which
// cache the channel connection (server/channels/channel-connections.ts) and store a call report in a
// transaction that checks it first (server/calls/calls.service.ts): for Retell, Vapi and Twilio
// Voice, each request a new call from a new customer,
//   - a connection disabled through one process is refused by the other at once, under load: every
//     request that starts after the change is a 404 and stores nothing, every 200 is a stored call;
//   - credentials replaced through one process: the other, whose cache holds the old ones, refuses
//     every request signed with them from then on (403, nothing stored) and accepts the new ones.
// Twilio's status callbacks of sent messages (delivery reports) take the same gate: a disabled
// connection's report is refused by the other process and moves nothing.
// PostgreSQL only (the embedded database takes one process).
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sign as retellSign } from "retell-sdk/lib/webhook_auth";
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
const START = Date.UTC(2026, 10, 21, 9, 0, 0);

let seq = 0;
const unique = () => `${process.pid.toString(16)}${Date.now().toString(16)}${(++seq).toString(16).padStart(6, "0")}`;

/** A new call's first report to `number`, signed with `secret` as the provider signs it: the path, headers, body and the call's provider id. */
type SignedCall = { path: string; headers: Record<string, string>; body: string; callId: string };

type Provider = {
  name: "retell" | "vapi" | "twilio";
  credentials: (secret: string) => Record<string, string>;
  newCall: (number: string, secret: string) => Promise<SignedCall>;
};

const PROVIDERS: Provider[] = [
  {
    name: "retell",
    credentials: (secret) => ({ api_key: secret }),
    newCall: async (number, secret) => {
      const callId = `call_${unique()}`;
      const call = { call_id: callId, direction: "inbound", from_number: uniquePhone(), to_number: number, call_status: "ongoing", start_timestamp: START };
      const body = JSON.stringify({ event: "call_started", call });
      return {
        path: "/api/webhooks/retell",
        headers: { "content-type": "application/json", "x-retell-signature": await retellSign(body, secret) },
        body,
        callId,
      };
    },
  },
  {
    name: "vapi",
    credentials: (secret) => ({ secret }),
    newCall: async (number, secret) => {
      const callId = `c0ffee00-0000-4000-8000-${unique().slice(-12).padStart(12, "0")}`;
      const call = {
        id: callId,
        type: "inboundPhoneCall",
        status: "in-progress",
        startedAt: new Date(START).toISOString(),
        customer: { number: uniquePhone() },
        phoneNumber: { number },
      };
      const body = JSON.stringify({
        message: { type: "status-update", status: "in-progress", timestamp: START, call, customer: call.customer, phoneNumber: call.phoneNumber },
      });
      const signature = createHmac("sha256", secret).update(body).digest("hex");
      return { path: "/api/webhooks/vapi", headers: { "content-type": "application/json", "x-vapi-signature": signature }, body, callId };
    },
  },
  {
    name: "twilio",
    credentials: (secret) => ({ account_sid: TWILIO_SID, auth_token: secret }),
    newCall: async (number, secret) => {
      const callId = `CA${unique().padEnd(32, "0").slice(0, 32)}`;
      const params = { CallSid: callId, AccountSid: TWILIO_SID, From: uniquePhone(), To: number, CallStatus: "no-answer", Direction: "inbound" };
      const path = "/api/webhooks/twilio/voice";
      const headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(secret, `${PUBLIC_BASE_URL}${path}`, params),
      };
      return { path, headers, body: new URLSearchParams(params).toString(), callId };
    },
  },
];

describe.runIf(process.env.DATABASE_URL)("call receivers' invariants across two receiver processes", () => {
  const fronts = twoReceiverFronts(PUBLIC_BASE_URL);

  /** A tenant with a connection of `provider` at a new number, and a dashboard session on front 0. */
  async function connectedTenant(provider: Provider, secret: string) {
    const tenant = await tenantWithKey(["read"]);
    const number = uniqueBusinessNumber();
    const db = scopeToTenant((await openDatabase()).prisma, tenant.tenantId);
    const channel = provider.name === "twilio" ? "sms" : "voice";
    const { id } = await connectChannel(db, { provider: provider.name, channel, address: number, credentials: provider.credentials(secret) }, OPERATOR);
    const cookie = await signInOverHttp(fronts[0]!.url, await userInTenant(tenant.tenantId, "admin"));
    return { tenantId: tenant.tenantId, number, connectionId: id, cookie };
  }

  async function post(front: Running, request: SignedCall): Promise<Sent> {
    const startedAt = performance.now();
    const res = await fetch(`${front.url}${request.path}`, { method: "POST", headers: request.headers, body: request.body });
    await res.text();
    return { id: request.callId, status: res.status, startedAt };
  }

  async function storedCalls(tenantId: string): Promise<string[]> {
    const rows = await (await openDatabase()).prisma.call.findMany({ where: { tenantId }, select: { providerCallId: true } });
    return rows.map((r) => r.providerCallId).sort();
  }

  /** Both processes have the connection cached: each stores one call. */
  async function warm(provider: Provider, number: string, secret: string) {
    for (const front of fronts) expect((await post(front, await provider.newCall(number, secret))).status).toBe(200);
  }

  it.each(PROVIDERS.map((p) => [p.name, p] as const))(
    "%s_a_connection_disabled_through_one_process_is_refused_by_the_other_at_once_under_load",
    async (_name, provider) => {
      const secret = `secret-of-${provider.name}-${unique()}`;
      const { tenantId, number, connectionId, cookie } = await connectedTenant(provider, secret);
      await warm(provider, number, secret);
      await expectRefusedAtOnceUnderLoad({
        send: async () => post(fronts[1]!, await provider.newCall(number, secret)),
        workers: 4,
        change: () => trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", { id: connectionId, status: "disabled" }),
        refusedWith: 404,
        stored: () => storedCalls(tenantId),
        warmups: 2,
      });
    },
    60_000,
  );

  it.each(PROVIDERS.map((p) => [p.name, p] as const))(
    "%s_credentials_replaced_through_one_process_the_other_refuses_the_old_signature_at_once_under_load",
    async (_name, provider) => {
      const secret = `secret-of-${provider.name}-${unique()}`;
      const replaced = `replaced-${provider.name}-${unique()}`;
      const { tenantId, number, connectionId, cookie } = await connectedTenant(provider, secret);
      await warm(provider, number, secret);
      await expectRefusedAtOnceUnderLoad({
        send: async () => post(fronts[1]!, await provider.newCall(number, secret)),
        workers: 4,
        change: () => trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", { id: connectionId, credentials: provider.credentials(replaced) }),
        refusedWith: 403,
        stored: () => storedCalls(tenantId),
        warmups: 2,
      });
      // The new credentials are accepted by both processes.
      for (const front of fronts) expect((await post(front, await provider.newCall(number, replaced))).status).toBe(200);
    },
    60_000,
  );

  it("twilio_a_delivery_report_to_a_connection_disabled_through_one_process_is_refused_by_the_other_and_moves_nothing", async () => {
    const twilio = PROVIDERS.find((p) => p.name === "twilio")!;
    const secret = `secret-of-reports-${unique()}`;
    const { tenantId, number, connectionId, cookie } = await connectedTenant(twilio, secret);
    await warm(twilio, number, secret);
    const db = (await openDatabase()).prisma;
    const conversation = await db.conversation.create({ data: { tenantId, channel: "sms", customerIdentifier: uniquePhone() } });
    const sid = (n: number) => `SM${unique().padEnd(30, "0").slice(0, 30)}${String(n).padStart(2, "0")}`;
    const [first, second] = [sid(1), sid(2)];
    await db.message.createMany({
      data: [first, second].map((providerMessageId) => ({
        tenantId,
        conversationId: conversation.id,
        direction: "outbound",
        author: "assistant",
        body: "Tuesday at 1 pm works.",
        status: "sent",
        provider: "twilio",
        providerMessageId,
      })),
    });
    const report = (messageSid: string) => {
      const params = { MessageSid: messageSid, AccountSid: TWILIO_SID, From: number, To: uniquePhone(), MessageStatus: "delivered" };
      const path = "/api/webhooks/twilio/messaging";
      const headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(secret, `${PUBLIC_BASE_URL}${path}`, params),
      };
      return { path, headers, body: new URLSearchParams(params).toString(), callId: messageSid };
    };
    // Front 1 has the connection cached and applies a report; then it is disabled through front 0.
    expect((await post(fronts[1]!, report(first))).status).toBe(200);
    expect((await trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", { id: connectionId, status: "disabled" })).status).toBe(200);
    expect((await post(fronts[1]!, report(second))).status).toBe(404);
    const statuses = await db.message.findMany({
      where: { tenantId, providerMessageId: { in: [first, second] } },
      select: { providerMessageId: true, status: true },
    });
    expect(Object.fromEntries(statuses.map((m) => [m.providerMessageId, m.status]))).toEqual({ [first]: "delivered", [second]: "sent" });
  }, 60_000);
});
