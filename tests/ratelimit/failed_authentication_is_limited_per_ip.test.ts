// Unauthenticated traffic is limited: each refused credential on /api/v1 counts against the
// client's address (500 a minute), then the answer is that layer's 429. Valid keys from the same
// address are never refused by it, and other addresses are unaffected. (In-process the request
// comes through the Fetch mount, which has no socket: the address is X-Forwarded-For's. Through
// the lean front, with the socket, see tests/http/limits_hold_through_the_lean_front.test.ts.)
import { randomInt } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { warmUpRateLimiter } from "../../server/ratelimit";
import { failedAuthBucketOf } from "../../server/ratelimit/failed-auth";
import { startOfNextWindow } from "../helpers/rate-limit-clock";

beforeAll(async () => {
  await warmUpRateLimiter();
});

/** An address of this run's own (198.18.0.0/15, the benchmarking range), so runs sharing a Redis do not meet. */
const freshIp = () => `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(1, 255)}`;

async function startOfAWindow() {
  startOfNextWindow();
}

describe("failed authentication per client IP", { timeout: 120_000 }, () => {
  it("429_501st_bad_secret_request_from_one_ip_and_another_ip_still_gets_401_and_valid_keys_pass", async () => {
    const { key } = await tenantWithKey(["read"]);
    const wrongSecret = key.slice(0, -6) + (key.endsWith("000000") ? "111111" : "000000");
    const [ip, other] = [freshIp(), freshIp()];
    await startOfAWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 500; i++) {
      statuses.push((await call("GET", "/offerings?limit=1", { key: wrongSecret, headers: { "x-forwarded-for": ip } })).status);
    }
    expect(statuses.every((s) => s === 401)).toBe(true);

    const refused = await call("GET", "/offerings?limit=1", { key: wrongSecret, headers: { "x-forwarded-for": ip } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(errorOf("rate_limited", "per-ip rate limit exceeded"));
    expect(refused.headers.get("x-ratelimit-limit")).toBe("500");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const now = Math.floor(Date.now() / 1000);
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBeGreaterThan(now);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);

    // A missing or malformed header is a failed authentication too.
    expect((await call("GET", "/offerings?limit=1", { headers: { "x-forwarded-for": ip } })).status).toBe(429);

    const elsewhere = await call("GET", "/offerings?limit=1", { key: wrongSecret, headers: { "x-forwarded-for": other } });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body).toEqual(errorOf("unauthorized", "unknown or revoked api key"));

    // The layer counts refusals only: a valid key from the refused address is served, with its own headers.
    const valid = await call("GET", "/offerings?limit=1", { key, headers: { "x-forwarded-for": ip } });
    expect(valid.status).toBe(200);
    expect(valid.headers.get("x-ratelimit-limit")).toBe("200");
  });

  it("an_ipv6_client_is_counted_by_its_64_and_an_ipv4_client_by_its_address", () => {
    expect(failedAuthBucketOf("2001:db8:aa:bb:1:2:3:4")).toBe("2001:db8:aa:bb::/64");
    expect(failedAuthBucketOf("2001:db8:aa:bb::ffff")).toBe("2001:db8:aa:bb::/64");
    expect(failedAuthBucketOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(failedAuthBucketOf("::1")).toBe("0:0:0:0::/64");
    expect(failedAuthBucketOf("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
    expect(failedAuthBucketOf("203.0.113.9")).toBe("203.0.113.9");
  });
});
