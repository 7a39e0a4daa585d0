// The lean front's logs over real HTTP, at LOG_LEVEL=info: every surface (REST /api/v1, the agent
// tools over REST and MCP, the dashboard's tRPC, the providers' receivers) is driven with known
// secrets (a valid and an invalid API key, a webhook secret, a Twilio auth token, a CRM token) in
// requests that fail in ways that log (unknown key, malformed key, no session, bad signature,
// upstream CRM failure), and dashboard sign-in with a wrong password. Each answer carries its X-Request-Id (401s included), each of those ids
// is on the request's log lines, and no secret is anywhere in the process's output (its log lines on stdout).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { connectChannel } from "../../server/channels/channel-connections";
import { OPERATOR } from "../../server/audit/record-audit";
import { dashboardCaller, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { TWILIO_SID, uniqueBusinessNumber } from "../channels/fixtures";
import { connectCrm } from "../crm/connect";
import { startFakeCrm, type FakeCrm } from "../crm/fake-crm-server";
import { userInTenant } from "../helpers/dashboard";
import { SIGN_IN_ENV, signInOverHttp } from "../dashboard/http-session";

// The fake CRM listens on 127.0.0.1, which only development and tests may call.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

const CRM_TOKEN = "crm-token-never-logged-4c1d9e";
const TWILIO_AUTH_TOKEN = "twilio-token-never-logged-7b2e";
const WRONG_PASSWORD = "password-never-logged-9d3a";

type Line = { level: string; msg: string; request_id?: string; [field: string]: unknown };

let mount: Running;
let crm: FakeCrm;
let key: string;
let unknownKey: string;
let webhookSecret: string;
let number: string;
let owner: string;

beforeAll(async () => {
  // The CRM fails and echoes the Authorization header it was sent into its error body.
  crm = await startFakeCrm({ kind: "json", status: 500, body: { error: "boom", echoed: `Bearer ${CRM_TOKEN}` } });
  const tenant = await tenantWithKey();
  key = tenant.key;
  // The same prefix (so the lookup finds the key) with another secret: an unknown key.
  unknownKey = key.slice(0, -4) + (key.endsWith("AAAA") ? "BBBB" : "AAAA");
  await connectCrm(tenant.tenantId, { provider: "http", baseUrl: crm.url, mapping: { name: "firstname" }, token: CRM_TOKEN });
  number = uniqueBusinessNumber();
  const db = scopeToTenant(await getDb(), tenant.tenantId);
  await connectChannel(
    db,
    { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: TWILIO_SID, auth_token: TWILIO_AUTH_TOKEN } },
    OPERATOR,
  );
  ({ secret: webhookSecret } = await dashboardCaller(tenant.tenantId).webhooks.createSubscription({
    url: "http://127.0.0.1:9/receiver",
    events: ["offering.created"] as never,
  }));
  owner = await userInTenant(tenant.tenantId, "owner");
  mount = await startMount("lean", { LOG_LEVEL: "info", WEBHOOK_ALLOW_LOOPBACK: "1" });
}, 180_000);
afterAll(async () => {
  await mount?.stop();
  await crm?.close();
});

/** The JSON lines the process has written so far (its "Ready on" line on stdout is not JSON). */
function logLines(): Line[] {
  return mount
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);
}

type Init = { method?: string; body?: string; headers: Record<string, string> };

async function send(path: string, init: Init) {
  const res = await fetch(mount.url + path, init);
  await res.text();
  return { status: res.status, requestId: res.headers.get("x-request-id") };
}

describe("request ids on every surface's answers and log lines, secrets on none", () => {
  const requests: { what: string; requestId: string; msg: string }[] = [];

  it("every_surface_answers_with_its_x_request_id_and_logs_it_on_a_failure", async () => {
    const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
    const inbound = form({ MessageSid: `SM${"1".repeat(32)}`, AccountSid: TWILIO_SID, From: "+14155550100", To: number, Body: "hello" });
    const cases: { what: string; path: string; init: Init; status: number; msg: string }[] = [
      {
        what: "rest_upstream_crm_failure",
        path: "/api/v1/crm/create-record",
        init: { method: "POST", body: JSON.stringify({ object: "contacts", fields: { name: "Sara" } }), headers: { authorization: `Bearer ${key}` } },
        status: 500,
        msg: "crm provider failed",
      },
      {
        what: "rest_unknown_key",
        path: "/api/v1/offerings",
        init: { headers: { authorization: `Bearer ${unknownKey}` } },
        status: 401,
        msg: "api auth refused",
      },
      {
        what: "agent_rest_unknown_key",
        path: "/api/agent/v1/tools",
        init: { headers: { authorization: `Bearer ${unknownKey}` } },
        status: 401,
        msg: "api auth refused",
      },
      {
        what: "mcp_malformed_key",
        path: "/api/agent/mcp",
        init: { method: "POST", body: "{}", headers: { authorization: `Bearer ${webhookSecret}` } },
        status: 401,
        msg: "api auth refused",
      },
      {
        what: "receiver_bad_signature",
        path: "/api/webhooks/twilio/messaging",
        init: {
          method: "POST",
          body: inbound,
          headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": TWILIO_AUTH_TOKEN, authorization: `Bearer ${key}` },
        },
        status: 403,
        msg: "webhook request refused",
      },
      {
        what: "receiver_missing_signature",
        path: "/api/webhooks/twilio/messaging",
        init: { method: "POST", body: inbound, headers: { "content-type": "application/x-www-form-urlencoded", "x-webhook-secret": webhookSecret } },
        status: 401,
        msg: "webhook request refused",
      },
      {
        what: "dashboard_sign_in_wrong_password",
        path: "/api/auth/sign-in/email",
        init: { method: "POST", body: JSON.stringify({ email: owner, password: WRONG_PASSWORD }), headers: { origin: mount.url } },
        status: 401,
        msg: "Invalid password",
      },
    ];
    for (const [i, c] of cases.entries()) {
      const sent = `logs-${c.what}-${i}`;
      const answer = await send(c.path, { ...c.init, headers: { "content-type": "application/json", ...c.init.headers, "x-request-id": sent } });
      expect({ what: c.what, ...answer }).toEqual({ what: c.what, status: c.status, requestId: sent });
      requests.push({ what: c.what, requestId: sent, msg: c.msg });
    }
    // The dashboard's endpoint makes its own id (it takes none from the client): read from the answer.
    const trpc = await send("/api/trpc/dashboard.members.list", { headers: { authorization: `Bearer ${key}`, cookie: `session=${CRM_TOKEN}` } });
    expect(trpc.status).toBe(401);
    expect(trpc.requestId).toMatch(/^[0-9a-f-]{36}$/);
    requests.push({ what: "trpc_no_session", requestId: trpc.requestId!, msg: "dashboard auth refused" });

    const lines = logLines();
    for (const r of requests) {
      const own = lines.filter((l) => l.request_id === r.requestId);
      expect({ what: r.what, msgs: own.map((l) => l.msg) }).toEqual({ what: r.what, msgs: expect.arrayContaining([r.msg]) });
    }
    // The upstream failure's line: its fields snake_case, with the tenant and the request.
    const crmLine = lines.find((l) => l.msg === "crm provider failed");
    expect(crmLine).toMatchObject({ level: "error", request_id: requests[0]!.requestId, provider: "http", object: "contacts", status: 500 });
  });

  it("no_secret_is_in_the_logs_of_those_requests", () => {
    expect(requests.length).toBe(8);
    const output = mount.output();
    for (const secret of [key, unknownKey, webhookSecret, TWILIO_AUTH_TOKEN, CRM_TOKEN, WRONG_PASSWORD]) expect(output).not.toContain(secret);
    // The check reads real output: the lines are there.
    expect(logLines().filter((l) => requests.some((r) => r.requestId === l.request_id)).length).toBeGreaterThanOrEqual(requests.length);
  });
});

describe("429s carry their X-Request-Id on every surface", () => {
  let limited: Running;
  beforeAll(async () => {
    await mount.stop(); // one server at a time on the embedded database
    // Limits of one or two in a day-long window, so no window boundary falls between a limit's last
    // admitted request and its 429 (the sliding window would count only part of the earlier window).
    const limits = { RATE_LIMIT_FAILED_AUTH_PER_IP: "1", RATE_LIMIT_PER_IP: "2", RATE_LIMIT_PER_USER: "1", RATE_LIMIT_WINDOW_SECONDS: "86400" };
    limited = await startMount("lean", { ...SIGN_IN_ENV, ...limits });
  }, 180_000);
  afterAll(async () => limited?.stop());

  const sendTo = async (path: string, init: Init) => {
    const res = await fetch(limited.url + path, init);
    await res.text();
    return { status: res.status, requestId: res.headers.get("x-request-id") };
  };

  it("429_answers_echo_the_request_id_on_rest_agent_rest_mcp_and_the_receivers_and_carry_one_on_trpc", async () => {
    const refused = { authorization: `Bearer ${unknownKey}`, "content-type": "application/json" };
    // A failed authentication spends the client address's one (if the requests above have not); every surface's next is a 429.
    expect((await sendTo("/api/v1/offerings", { headers: { ...refused, "x-request-id": "spends-the-one" } })).requestId).toBe("spends-the-one");
    const surfaces: [string, Init][] = [
      ["/api/v1/offerings", { headers: { ...refused, "x-request-id": "rest-429" } }],
      ["/api/agent/v1/tools", { headers: { ...refused, "x-request-id": "agent-429" } }],
      ["/api/agent/mcp", { method: "POST", body: "{}", headers: { ...refused, "x-request-id": "mcp-429" } }],
    ];
    for (const [path, init] of surfaces) {
      expect({ path, ...(await sendTo(path, init)) }).toEqual({ path, status: 429, requestId: init.headers["x-request-id"] });
    }
    // The receivers: two requests per client address (these two, or the ones above), then 429.
    const receiver = (id: string): Init => ({ method: "POST", body: "", headers: { "content-type": "application/x-www-form-urlencoded", "x-request-id": id } });
    for (const id of ["receiver-1", "receiver-2"]) expect((await sendTo("/api/webhooks/twilio/messaging", receiver(id))).requestId).toBe(id);
    expect(await sendTo("/api/webhooks/twilio/messaging", receiver("receiver-429"))).toEqual({ status: 429, requestId: "receiver-429" });
    // The dashboard: one call per user, then 429; its id is always its own.
    const cookie = await signInOverHttp(limited.url, owner);
    const trpc = () => sendTo("/api/trpc/dashboard.members.list", { headers: { cookie, origin: limited.url } });
    const [first, second] = [await trpc(), await trpc()];
    expect([first.status, second.status]).toEqual([200, 429]);
    expect(second.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.requestId).not.toBe(first.requestId);
  });
});
