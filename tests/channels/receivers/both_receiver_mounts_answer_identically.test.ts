// The receivers have two mounts: the lean front answers /api/webhooks straight from node:http, and
// the app-router route file (what `next start` serves) goes through a Fetch Request and Response.
// The same requests to both get the same status, headers and body, over real HTTP from one server
// process (both-mounts-main.ts) on this worker's database: accepted and stored, a missing or wrong
// signature, an unknown number, malformed and oversized bodies, the WhatsApp handshake, an unknown
// receiver, and the per-IP limit's 429.
import { createHmac, randomInt } from "node:crypto";
import { Agent } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { freePort, spawnServer, type Running } from "../../../scripts/bench/services";
import { closeDb, getDb } from "../../../server/db/client";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { mountEnv, ROOT } from "../../helpers/http-mounts";
import { TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "../fixtures";
import { tenantState } from "./api-reader";
import { sendFrom, type PeerAnswer } from "./peer-request";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const MESSAGING = "/api/webhooks/twilio/messaging";
const LIMIT = 30;

type Answer = PeerAnswer;
type Mount = { name: "lean front" | "route file"; url: string; peer: Agent };

/** A loopback address of this run's own, so the per-IP limit counts each mount's requests apart. */
const loopbackPeer = () => new Agent({ keepAlive: true, localAddress: `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}` });

const send = (mount: Mount, target: string, opts: Parameters<typeof sendFrom>[3] & { peer?: Agent } = {}) =>
  sendFrom(mount, opts.peer ?? mount.peer, target, opts);

/**
 * What must be equal: status, body, and every header but the ones node's server adds per connection
 * or time; the limit window's end (which a minute's boundary between the two requests can move) is
 * compared as present and numeric.
 */
function comparable(answer: Answer) {
  const { date: _date, connection: _connection, "keep-alive": _keepAlive, ...headers } = answer.headers;
  const reset = headers["x-ratelimit-reset"];
  if (reset !== undefined) headers["x-ratelimit-reset"] = /^\d+$/.test(String(reset)) ? "<epoch seconds>" : String(reset);
  // Each answer has its own request id: both carry one.
  headers["x-request-id"] = /^[0-9a-f-]{36}$/.test(String(headers["x-request-id"])) ? "<uuid>" : String(headers["x-request-id"]);
  return { status: answer.status, headers, text: answer.text };
}

let sidCounter = 0;
const newSid = () => `SM${(Date.now().toString(16) + (++sidCounter).toString(16).padStart(6, "0") + process.pid.toString(16)).padEnd(32, "0").slice(0, 32)}`;

describe("both mounts of the receivers answer identically", () => {
  let server: Running;
  let mounts: Mount[];
  let tenant: { tenantId: string; key: string };
  const number = uniqueBusinessNumber();
  const phoneNumberId = `${Date.now()}${process.pid}`.slice(-15);
  const verifyToken = `verify-${phoneNumberId}`;

  beforeAll(async () => {
    tenant = await tenantWithKey(["read"]);
    const db = scopeToTenant(await getDb(), tenant.tenantId);
    const twilio = { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN };
    await connectChannel(db, { provider: "twilio", channel: "sms", address: number, credentials: twilio }, OPERATOR);
    const whatsapp = { app_secret: "app-secret-both-mounts", verify_token: verifyToken, access_token: "EAAG-access-token" };
    await connectChannel(db, { provider: "whatsapp_cloud", channel: "whatsapp", address: phoneNumberId, credentials: whatsapp }, OPERATOR);
    await closeDb(); // the embedded database takes one process: the server's
    const routeFilePort = await freePort();
    server = await spawnServer("both receiver mounts", ["--import", "tsx", path.join(ROOT, "tests/channels/receivers/both-mounts-main.ts")], {
      port: await freePort(),
      cwd: ROOT,
      readyPath: "/api/v1",
      timeoutMs: 120_000,
      // A day-long window, so no window boundary falls inside the 429 test's LIMIT + 1 requests.
      env: mountEnv({ PUBLIC_BASE_URL, RATE_LIMIT_PER_IP: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: "86400", ROUTE_FILE_PORT: String(routeFilePort) }),
    });
    mounts = [
      { name: "lean front", url: server.url, peer: loopbackPeer() },
      { name: "route file", url: `http://127.0.0.1:${routeFilePort}`, peer: loopbackPeer() },
    ];
  });
  afterAll(async () => server?.stop());

  /** An inbound SMS signed as Twilio signs it (with `token` over the public URL), changed by `change`. */
  function inbound(change: { token?: string; to?: string; from?: string; signature?: null; contentType?: string } = {}) {
    const params = {
      MessageSid: newSid(),
      AccountSid: TWILIO_SID,
      From: change.from ?? uniquePhone(),
      To: change.to ?? number,
      Body: "Hello",
      SmsStatus: "received",
    };
    const headers: Record<string, string> = { "content-type": change.contentType ?? "application/x-www-form-urlencoded" };
    if (change.signature !== null)
      headers["x-twilio-signature"] = getExpectedTwilioSignature(change.token ?? TWILIO_TOKEN, `${PUBLIC_BASE_URL}${MESSAGING}`, params);
    return { headers, body: new URLSearchParams(params).toString() };
  }

  /** Sends the request `make` builds (a fresh one per mount) to both mounts; their answers, lean front first. */
  async function toBoth(target: string, make: () => { method?: string; headers?: Record<string, string>; body?: string }) {
    const [lean, routeFile] = await Promise.all(mounts.map((mount) => send(mount, target, make())));
    return { lean: lean!, routeFile: routeFile! };
  }

  it.each([
    ["200_an_inbound_sms", 200, () => inbound()],
    ["401_without_the_signature", 401, () => inbound({ signature: null })],
    ["403_signed_with_another_token", 403, () => inbound({ token: "not-the-auth-token" })],
    [
      "404_a_number_nobody_connected",
      404,
      (
        (unknown) => () =>
          inbound({ to: unknown })
      )(uniqueBusinessNumber()),
    ],
    ["400_a_json_content_type", 400, () => inbound({ contentType: "application/json" })],
    ["400_a_blank_sender", 400, () => inbound({ from: " " })],
    ["413_a_declared_length_over_1_mib", 413, () => ({ ...inbound(), body: `Body=${"x".repeat(1024 * 1024)}` })],
  ])("%s on the twilio messaging receiver", async (_name, status, make) => {
    const { lean, routeFile } = await toBoth(MESSAGING, make);
    expect(lean.status).toBe(status);
    expect(comparable(lean)).toEqual(comparable(routeFile));
  });

  it("stores the accepted message of each mount once", async () => {
    const customers = [uniquePhone(), uniquePhone()];
    for (const [i, mount] of mounts.entries()) expect((await send(mount, MESSAGING, inbound({ from: customers[i] }))).status).toBe(200);
    const state = await tenantState(server.url, tenant.key);
    for (const customer of customers) {
      const conversation = state.conversations.find((c) => c.customer_identifier === customer);
      expect(conversation).toMatchObject({ channel: "sms", message_count: 1 });
    }
  });

  it.each([
    [
      "200_the_whatsapp_handshake_echoes_the_challenge",
      200,
      `/api/webhooks/whatsapp/${phoneNumberId}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`,
    ],
    [
      "403_the_handshake_with_another_verify_token",
      403,
      `/api/webhooks/whatsapp/${phoneNumberId}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1158201444`,
    ],
    ["404_the_handshake_of_an_unknown_phone_number_id", 404, "/api/webhooks/whatsapp/999999999999999?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1"],
    ["404_a_get_on_a_post_only_receiver", 404, MESSAGING],
  ])("%s", async (_name, status, target) => {
    const { lean, routeFile } = await toBoth(target, () => ({ method: "GET" }));
    expect(lean.status).toBe(status);
    expect(comparable(lean)).toEqual(comparable(routeFile));
  });

  it("400_a_whatsapp_notification_that_is_not_json_after_its_signature_verifies", async () => {
    const body = "{not json";
    const signature = `sha256=${createHmac("sha256", "app-secret-both-mounts").update(body).digest("hex")}`;
    const { lean, routeFile } = await toBoth(`/api/webhooks/whatsapp/${phoneNumberId}`, () => ({
      headers: { "content-type": "application/json", "x-hub-signature-256": signature },
      body,
    }));
    expect(lean).toMatchObject({ status: 400, text: JSON.stringify({ error: { code: "bad_request", message: "malformed JSON body" } }) });
    expect(comparable(lean)).toEqual(comparable(routeFile));
  });

  it("429_past_the_per_ip_limit_on_both_with_the_same_body_and_headers", async () => {
    const peers = mounts.map(() => loopbackPeer());
    const answers = await Promise.all(
      mounts.map(async (mount, i) => {
        let last: Answer | undefined;
        for (let n = 0; n <= LIMIT; n++)
          last = await send(mount, "/api/webhooks/nope", { peer: peers[i], headers: { "content-type": "text/plain" }, body: "" });
        return last!;
      }),
    );
    const [lean, routeFile] = answers.map(comparable);
    expect(lean).toMatchObject({ status: 429, text: JSON.stringify({ error: { code: "rate_limited", message: "per-ip rate limit exceeded" } }) });
    expect(lean!.headers["retry-after"]).toMatch(/^\d+$/);
    // Retry-After (seconds left in the window) may differ by one between the two runs: compare the rest.
    const withoutTiming = (a: ReturnType<typeof comparable>) => ({ ...a, headers: { ...a.headers, "retry-after": "<seconds>" } });
    expect(withoutTiming(lean!)).toEqual(withoutTiming(routeFile!));
  });
});
