// A suspended tenant: its API keys (REST), agent tools (REST and MCP) and dashboard sessions are
// refused with 403 `forbidden` "tenant suspended…"; a provider's message is still stored and its
// event waits, with every other event, pending (no attempt spent) while the embedded worker runs;
// resuming delivers them in order to a real consumer on 127.0.0.1. Another tenant is unaffected.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { connectChannel } from "../../server/channels/channel-connections";
import { OPERATOR } from "../../server/audit/record-audit";
import { answerWebhookRequest } from "../../server/receivers";
import { handleAgentRequest } from "../../server/http/agent-rest";
import { handleMcpRequest } from "../../server/http/mcp";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { MESSAGES } from "../../server/lib/errors";
import { resumeTenant, suspendTenant } from "../../server/tenants/lifecycle";
import { call, dashboardCaller, tenantWithKey } from "../helpers/api";
import { sessionCookie, trpc, userInTenant } from "../helpers/dashboard";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { aClaimHasPassed, emitInOrder } from "../helpers/webhooks";
import { uniquePhone } from "../helpers/conversations";
import { TWILIO_SID, uniqueBusinessNumber } from "../channels/fixtures";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
process.env.PUBLIC_BASE_URL = PUBLIC_BASE_URL;
const TWILIO_PATH = "/api/webhooks/twilio/messaging";
const TOKEN = "auth-token-of-the-suspended-tenant";
const SUSPENDED = { error: { code: "forbidden", message: MESSAGES.tenantSuspended } };

let consumer: Consumer;
beforeAll(async () => {
  consumer = await startConsumer(200);
  await startEmbeddedWorker({ pollIntervalMs: 100 });
});
afterAll(async () => {
  await stopEmbeddedWorker();
  await consumer?.close();
});

async function agentTool(key: string, tool: string, input: unknown) {
  const res = await handleAgentRequest(
    new Request(`http://127.0.0.1/api/agent/v1/tools/${tool}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(input),
    }),
  );
  return { status: res.status, body: await res.json() };
}

async function mcpToolCall(key: string) {
  const res = await handleMcpRequest(
    new Request("http://127.0.0.1/api/agent/mcp", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_offerings", arguments: {} } }),
    }),
  );
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) };
}

async function twilioInbound(to: string, from: string, sid: string) {
  const params = { MessageSid: sid, AccountSid: TWILIO_SID, From: from, To: to, Body: "Is the villa still available?", NumMedia: "0", SmsStatus: "received" };
  const res = await answerWebhookRequest(
    new Request(`${PUBLIC_BASE_URL}${TWILIO_PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(TOKEN, `${PUBLIC_BASE_URL}${TWILIO_PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    }),
  );
  return { status: res.status, text: await res.text() };
}

describe("a suspended tenant", () => {
  it("is_refused_on_rest_agent_tools_mcp_and_dashboard_while_providers_messages_are_stored_and_held_events_are_delivered_in_order_on_resume", async () => {
    const a = await tenantWithKey();
    const b = await tenantWithKey();
    const number = uniqueBusinessNumber();
    await connectChannel(
      scopeToTenant(await getDb(), a.tenantId),
      { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: TWILIO_SID, auth_token: TOKEN } },
      OPERATOR,
    );
    // Five a second: sends 200 ms apart, so the order they arrive in is the order they were sent (at the
    // default 50 a second, 20 ms apart over separate connections, a loaded machine swapped two arrivals).
    await dashboardCaller(a.tenantId).webhooks.createSubscription({
      url: consumer.url("/a"),
      events: ["conversation.created", "csat.received"] as never,
      max_deliveries_per_second: 5,
    });
    const owner = await userInTenant(a.tenantId, "owner");
    const cookie = await sessionCookie(owner);
    expect((await call("GET", "/offerings", { key: a.key })).status).toBe(200);
    expect((await trpc("query", "crm.connection", undefined, { cookie })).status).toBe(200);

    expect(await suspendTenant(a.tenantId, "unpaid invoice")).toMatchObject({ id: a.tenantId, status: "suspended", suspended_at: expect.any(String) });

    // Every surface: 403 with the one envelope; nothing runs (the POST creates nothing).
    const list = await call("GET", "/offerings", { key: a.key });
    expect([list.status, list.body]).toEqual([403, SUSPENDED]);
    const create = await call("POST", "/offerings", { key: a.key, body: { title: "Villa", price: 10, price_currency: "USD" } });
    expect([create.status, create.body]).toEqual([403, SUSPENDED]);
    expect(await (await getDb()).offering.count({ where: { tenantId: a.tenantId } })).toBe(0);
    expect(await agentTool(a.key, "search_offerings", {})).toEqual({ status: 403, body: SUSPENDED });
    expect(await mcpToolCall(a.key)).toEqual({ status: 403, body: SUSPENDED });
    const dashboard = await trpc("query", "crm.connection", undefined, { cookie });
    expect(dashboard.status).toBe(403);
    expect(dashboard.error).toMatchObject({ message: MESSAGES.tenantSuspended, data: { appCode: "forbidden", httpStatus: 403 } });
    // Another tenant works on.
    expect((await call("GET", "/offerings", { key: b.key })).status).toBe(200);

    // A customer's message through the provider is stored (and answered as Twilio expects).
    const customer = uniquePhone();
    const inbound = await twilioInbound(number, customer, `SM${Date.now().toString(16).padEnd(32, "0")}`);
    expect(inbound).toEqual({ status: 200, text: '<?xml version="1.0" encoding="UTF-8"?><Response/>' });
    const stored = await (await getDb()).message.findMany({ where: { tenantId: a.tenantId } });
    expect(stored.map((m) => [m.direction, m.body])).toEqual([["inbound", "Is the villa still available?"]]);
    // More events while suspended; none leaves, none spends an attempt.
    const emitted = await emitInOrder(a.tenantId, 3);
    // Once a later claim has run, one that ignored the suspension would have leased these (and sent them).
    await aClaimHasPassed(consumer);
    expect(consumer.received.filter((r) => r.path === "/a")).toHaveLength(0);
    const held = await (await getDb()).webhookDelivery.findMany({ where: { tenantId: a.tenantId }, orderBy: { seq: "asc" } });
    expect(held.map((d) => [d.status, d.attemptCount, d.lockedUntil])).toEqual(Array.from({ length: 4 }, () => ["pending", 0, null]));

    expect(await resumeTenant(a.tenantId)).toMatchObject({ status: "active", suspended_at: null });
    await consumer.waitFor(5, 15_000); // the sentinel and these four
    const toA = consumer.received.filter((r) => r.path === "/a");
    expect(toA.map((r) => r.body.event)).toEqual(["conversation.created", "csat.received", "csat.received", "csat.received"]);
    expect(toA[0].body.data.object.customer_identifier).toBe(customer);
    expect(toA.slice(1).map((r) => r.body.id)).toEqual(emitted);
    expect((await call("GET", "/offerings", { key: a.key })).status).toBe(200);
    expect((await trpc("query", "crm.connection", undefined, { cookie })).status).toBe(200);

    // Both changes are in the tenant's audit log, by the operator.
    const audit = await (await getDb()).auditLog.findMany({ where: { tenantId: a.tenantId, targetType: "tenant" }, orderBy: { createdAt: "asc" } });
    expect(audit.map((e) => [e.action, e.actorType, e.details])).toEqual([
      ["tenant.suspended", "operator", { reason: "unpaid invoice" }],
      ["tenant.resumed", "operator", {}],
    ]);
  });
});
