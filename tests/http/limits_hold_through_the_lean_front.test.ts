// The limits as an attacker meets them: real HTTP through the lean front (`npm start`), on the
// store this run is configured with (Redis when REDIS_URL is set, in-process otherwise).
// - a burst of 400 concurrent connections on one key limited to 200/min admits exactly 200;
// - a dashboard user's tRPC batches count every call in them;
// - a client cannot pick its own address with X-Forwarded-For: not for the sign-in limit, not for
//   the per-IP limit of failed authentication (the front listens on 127.0.0.1; each test connects
//   from a loopback address of its own, 127.x.y.z, so the server sees a distinct socket address);
// - a request with a bad key is answered 401 without the server waiting for its body.
import { randomInt } from "node:crypto";
import { request, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { PASSWORD, userInTenant } from "../helpers/dashboard";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { startOfNextWindowIn, windowClockEnv } from "../helpers/rate-limit-clock";

requireNextBuild();

type Answer = { status: number; headers: IncomingHttpHeaders; body: string };

/** A loopback address of this run's own: the server sees it as the socket's remote address. */
const freshLoopback = () => `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`;

let server: Running;
let api: { key: string; wrongSecret: string };
let dashboardEmail: string;

function send(method: string, path: string, opts: { from?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: opts.headers, localAddress: opts.from, agent: false },
      (res) => {
        let body = "";
        res
          .setEncoding("utf8")
          .on("data", (c) => (body += c))
          .on("error", reject);
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

async function signIn(from: string, password: string, forwardedFor?: string) {
  const headers: Record<string, string> = { "content-type": "application/json", origin: server.url };
  if (forwardedFor) headers["x-forwarded-for"] = forwardedFor;
  return send("POST", "/api/auth/sign-in/email", { from, headers, body: JSON.stringify({ email: dashboardEmail, password }) });
}

describe("limits through the lean front (needs `next build`)", { timeout: 180_000 }, () => {
  beforeAll(async () => {
    const { key, tenantId } = await tenantWithKey(["read"]);
    api = { key, wrongSecret: key.slice(0, -6) + (key.endsWith("000000") ? "111111" : "000000") };
    dashboardEmail = await userInTenant(tenantId, "member");
    // Production defaults: the test setup's RATE_LIMIT_TIMEOUT_MS (read by the old fail-open timeout) does not apply.
    // Its clock is moved to the start of a window before each exact count (no wait for a fresh minute).
    server = await startMount("lean", { RATE_LIMIT_TIMEOUT_MS: undefined, ...windowClockEnv() });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("429_burst_of_400_concurrent_connections_on_one_key_admits_exactly_200_each_with_rate_limit_headers", async () => {
    const windowStart = await startOfNextWindowIn(server.proc);
    const answers = await Promise.all(
      Array.from({ length: 400 }, () => send("GET", "/api/v1/offerings?limit=1", { headers: { authorization: `Bearer ${api.key}` } })),
    );
    const admitted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect([admitted.length, refused.length]).toEqual([200, 200]);
    for (const a of admitted) expect(a.headers["x-ratelimit-limit"]).toBe("200");
    expect(admitted.map((a) => Number(a.headers["x-ratelimit-remaining"])).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    const reset = admitted[0]!.headers["x-ratelimit-reset"];
    expect(reset).toBe(String((windowStart + 60_000) / 1000)); // the window the server's clock was moved into
    for (const a of refused) {
      expect(JSON.parse(a.body)).toEqual({ error: { code: "rate_limited", message: "per-key rate limit exceeded" } });
      expect(a.headers["x-ratelimit-limit"]).toBe("200");
      expect(a.headers["x-ratelimit-remaining"]).toBe("0");
      expect(a.headers["x-ratelimit-reset"]).toBe(reset);
      expect(Number(a.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(Number(a.headers["retry-after"])).toBeLessThanOrEqual(60);
    }
  });

  it("429_dashboard_trpc_batches_count_each_call_20_batches_of_20_calls_get_exactly_200_answers", async () => {
    const signedIn = await signIn(freshLoopback(), PASSWORD);
    expect(signedIn.status).toBe(200);
    const cookie = ([] as string[])
      .concat(signedIn.headers["set-cookie"] ?? [])
      .map((c) => c.split(";")[0])
      .join("; ");
    await startOfNextWindowIn(server.proc);
    const calls = Array.from({ length: 20 }, () => "offerings.list").join(",");
    const input = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [i, { limit: 1 }]))));
    const batches = await Promise.all(
      Array.from({ length: 20 }, () => send("GET", `/api/trpc/${calls}?batch=1&input=${input}`, { headers: { cookie, origin: server.url } })),
    );
    const results = batches.flatMap(
      (b) => JSON.parse(b.body) as { result?: unknown; error?: { message: string; data: { httpStatus: number; appCode: string } } }[],
    );
    expect(results).toHaveLength(400);
    expect(results.filter((r) => r.result !== undefined)).toHaveLength(200);
    const errors = results.filter((r) => r.error).map((r) => ({ message: r.error!.message, status: r.error!.data.httpStatus, code: r.error!.data.appCode }));
    expect(errors).toEqual(Array.from({ length: 200 }, () => ({ message: "per-user rate limit exceeded", status: 429, code: "rate_limited" })));
  });

  it("429_sign_in_after_10_wrong_passwords_from_one_address_whatever_x_forwarded_for_says", async () => {
    const attacker = freshLoopback();
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await signIn(attacker, "wrong password", `203.0.113.${i + 1}`)).status);
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
    // Another client, even one claiming the attacker's last forwarded address, signs in.
    expect((await signIn(freshLoopback(), PASSWORD, "203.0.113.15")).status).toBe(200);
  });

  it("429_501st_bad_secret_request_from_one_address_whatever_x_forwarded_for_says_another_address_gets_401", async () => {
    await startOfNextWindowIn(server.proc);
    const attacker = freshLoopback();
    const bad = (from: string, i: number) =>
      send("GET", "/api/v1/offerings?limit=1", { from, headers: { authorization: `Bearer ${api.wrongSecret}`, "x-forwarded-for": `198.51.100.${i % 250}` } });
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      statuses.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => bad(attacker, round * 50 + i)))).map((a) => a.status));
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(500);
    const refused = await bad(attacker, 500);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({ error: { code: "rate_limited", message: "per-ip rate limit exceeded" } });
    expect(refused.headers["x-ratelimit-limit"]).toBe("500");
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const elsewhere = await bad(freshLoopback(), 500);
    expect(elsewhere.status).toBe(401);
    expect(JSON.parse(elsewhere.body)).toEqual({ error: { code: "unauthorized", message: "unknown or revoked api key" } });
  });

  it("401_bad_key_is_answered_while_its_body_is_still_arriving", async () => {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    const answer = new Promise<string>((resolve, reject) => {
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk) => {
        text += chunk;
        if (text.includes("\r\n\r\n") && text.includes("}}")) resolve(text);
      });
      socket.on("error", reject);
    });
    // Promises 1000 bytes of body and sends 14 of them, then nothing more.
    socket.write(
      `POST /api/v1/offerings HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${api.wrongSecret}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":"slow`,
    );
    try {
      // Before the fix the bridge read the body first: no answer until the client gave up.
      const text = await Promise.race([answer, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer within 5 s")), 5000))]);
      expect(text.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({ error: { code: "unauthorized", message: "unknown or revoked api key" } });
    } finally {
      socket.destroy();
    }
  });
});
