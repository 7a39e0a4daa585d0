// The per-IP limit on every receiver under /api/webhooks (RATE_LIMIT_PER_IP, 500 a minute), over
// real HTTP through a real front process. Each client connects from a loopback address of its own
// (127.x.y.z, bound as the socket's local address), so the server sees distinct peers and runs
// sharing one Redis never meet. The front trusts one of those peers as a proxy (TRUSTED_PROXIES):
// only that peer's X-Forwarded-For names the client; anyone else's is ignored.
import { randomInt } from "node:crypto";
import { Agent } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../../scripts/bench/services";
import { openDatabase } from "../../../server/db/database";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { startOfNextWindowIn, windowClockEnv } from "../../helpers/rate-limit-clock";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "../fixtures";
import { tenantState } from "./api-reader";
import { sendFrom, type PeerAnswer } from "./peer-request";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const MESSAGING = "/api/webhooks/twilio/messaging";
const LIMIT = 500;
const REFUSAL = { error: { code: "rate_limited", message: "per-ip rate limit exceeded" } };

/** A loopback address of this run's own (never 127.0.0.1, which every other test uses). */
const loopbackPeer = () => `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`;
/** A public-looking client address (198.18.0.0/15, the benchmarking range). */
const clientAddress = () => `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(1, 255)}`;

type Answer = PeerAnswer;

/** One HTTP request to the front from `peer` (the socket's local address). */
const send = (front: Running, peer: Agent, path: string, opts?: Parameters<typeof sendFrom>[3]) => sendFrom(front, peer, path, opts);

const peerAgent = (address: string) => new Agent({ keepAlive: true, maxSockets: 32, localAddress: address });

/** `count` requests, at most 32 in flight, each with its own headers. */
async function burst(count: number, one: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const i = next++;
        answers[i] = await one(i);
      }
    }),
  );
  return answers;
}

function expectRefusal(answer: Answer) {
  expect(answer.status).toBe(429);
  expect(answer.headers["content-type"]).toBe("application/json");
  expect(JSON.parse(answer.text)).toEqual(REFUSAL);
  expect(answer.headers["x-ratelimit-limit"]).toBe(String(LIMIT));
  expect(answer.headers["x-ratelimit-remaining"]).toBe("0");
  const retryAfter = Number(answer.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(Number(answer.headers["x-ratelimit-reset"])).toBeGreaterThan(Math.floor(Date.now() / 1000));
}

describe("per-IP limit on the webhook receivers (real HTTP)", { timeout: 180_000 }, () => {
  const untrusted = loopbackPeer();
  let proxy = loopbackPeer();
  while (proxy === untrusted) proxy = loopbackPeer();
  const agents = { untrusted: peerAgent(untrusted), proxy: peerAgent(proxy) };
  let front: Running;
  let tenant: { tenantId: string; key: string; number: string };

  beforeAll(async () => {
    const { tenantId, key } = await tenantWithKey(["read"]);
    const number = uniqueBusinessNumber();
    await connectChannel(
      scopeToTenant((await openDatabase()).prisma, tenantId),
      {
        provider: "twilio",
        channel: "sms",
        address: number,
        credentials: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN },
      },
      OPERATOR,
    );
    tenant = { tenantId, key, number };
    front = await startReceiverFront({ PUBLIC_BASE_URL, TRUSTED_PROXIES: proxy, RATE_LIMIT_PER_IP: String(LIMIT), ...windowClockEnv() });
  });
  afterAll(async () => {
    agents.untrusted.destroy();
    agents.proxy.destroy();
    await front?.stop();
  });

  /** A well-signed inbound SMS to the tenant's number. */
  const signedInbound = () => {
    const params = {
      MessageSid: `SM${randomInt(2 ** 47)
        .toString(16)
        .padStart(32, "0")}`,
      AccountSid: TWILIO_SID,
      From: uniquePhone(),
      To: tenant.number,
      Body: "Is the villa still available?",
      NumMedia: "0",
    };
    return {
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_BASE_URL}${MESSAGING}`, params),
      },
      body: new URLSearchParams(params).toString(),
    };
  };

  it("429_burst_of_600_from_one_address_admits_exactly_the_limit_whatever_x_forwarded_for_it_sends", async () => {
    await startOfNextWindowIn(front.proc);
    // Unsigned (401) requests, each claiming another client in X-Forwarded-For: from an untrusted peer the claim is ignored.
    const answers = await burst(LIMIT + 100, () =>
      send(front, agents.untrusted, MESSAGING, {
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": clientAddress() },
        body: "Body=hi",
      }),
    );
    const admitted = answers.filter((a) => a.status === 401);
    const refused = answers.filter((a) => a.status === 429);
    expect(admitted.length).toBe(LIMIT);
    expect(refused.length).toBe(100);
    expect(JSON.parse(admitted[0]!.text)).toEqual({ error: { code: "unauthorized", message: "missing X-Twilio-Signature header" } });
    expect(admitted.every((a) => a.headers["x-ratelimit-limit"] === String(LIMIT))).toBe(true);
    for (const answer of refused) expectRefusal(answer);

    // Every receiver shares the address's budget, unknown paths too; a correctly signed message is refused unread.
    expectRefusal(await send(front, agents.untrusted, "/api/webhooks/retell", { headers: { "content-type": "application/json" }, body: "{}" }));
    expectRefusal(await send(front, agents.untrusted, "/api/webhooks/whatsapp/123456?hub.mode=subscribe", { method: "GET" }));
    expectRefusal(await send(front, agents.untrusted, "/api/webhooks/no-such-provider", { method: "GET" }));
    expectRefusal(await send(front, agents.untrusted, MESSAGING, signedInbound()));
    const state = await tenantState(front.url, tenant.key);
    expect(state.conversations).toEqual([]);
    expect(state.messages).toEqual([]);

    // Another address is unaffected: its signed message is stored and answered with TwiML.
    const elsewhere = await send(front, agents.proxy, MESSAGING, signedInbound());
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers["x-ratelimit-limit"]).toBe(String(LIMIT));
    expect(Number(elsewhere.headers["x-ratelimit-remaining"])).toBeLessThan(LIMIT);
    expect((await tenantState(front.url, tenant.key)).messages).toHaveLength(1);
  });

  it("a_trusted_proxys_x_forwarded_for_names_the_client_it_counts_against", async () => {
    await startOfNextWindowIn(front.proc);
    const exhausted = clientAddress();
    const unsigned = (xff?: string) =>
      send(front, agents.proxy, MESSAGING, {
        headers: { "content-type": "application/x-www-form-urlencoded", ...(xff ? { "x-forwarded-for": xff } : {}) },
        body: "Body=hi",
      });
    const answers = await burst(LIMIT + 1, () => unsigned(exhausted));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(LIMIT);
    expectRefusal(answers.find((a) => a.status === 429)!);

    // The proxy itself and the other clients behind it keep their own budgets.
    const fresh = await unsigned(`${clientAddress()}, ${proxy}`);
    expect(fresh.status).toBe(401);
    expect(fresh.headers["x-ratelimit-remaining"]).toBe(String(LIMIT - 1));
    expect((await unsigned()).status).toBe(401);
    // A hop before the client is not believed: the rightmost untrusted entry is the client.
    expectRefusal(await unsigned(`${clientAddress()}, ${exhausted}`));
  });
});
