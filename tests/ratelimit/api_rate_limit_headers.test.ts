// The limiter as an API client meets it: through /api/v1, with the store this process is
// configured with (Redis when REDIS_URL is set, in-process otherwise).
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, newKey, tenantWithKey } from "../helpers/api";
import { limitApiRequest, warmUpRateLimiter } from "../../server/ratelimit";
import { revokeApiKey } from "../../server/auth/api-keys";
import { OPERATOR } from "../../server/audit/record-audit";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { startOfNextWindow } from "../helpers/rate-limit-clock";

beforeAll(async () => {
  await warmUpRateLimiter();
});

describe("/api/v1 per-key limit", { timeout: 180_000 }, () => {
  it("200_admitted_of_205_the_201st_is_429_with_the_per_key_headers", async () => {
    const { key } = await tenantWithKey(["read"]);
    // Windows are aligned to the minute: a run that straddles a boundary sees the previous window's
    // weight shrink as it goes and rightly admits more. Start inside a fresh window instead.
    startOfNextWindow();
    const statuses: number[] = [];
    let first: Headers | undefined;
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 205; i++) {
      const res = await call("GET", "/offerings?limit=1", { key });
      statuses.push(res.status);
      if (i === 0) first = res.headers;
      if (res.status === 429 && !refused) refused = res;
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    expect(statuses.indexOf(429)).toBe(200);
    expect(first!.get("x-ratelimit-limit")).toBe("200");
    expect(first!.get("x-ratelimit-remaining")).toBe("199");
    expect(refused!.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
    const now = Math.floor(Date.now() / 1000);
    const reset = Number(refused!.headers.get("x-ratelimit-reset"));
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(refused!.headers.get("x-ratelimit-limit")).toBe("200");
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(reset).toBeGreaterThan(now);
    expect(reset).toBeLessThanOrEqual(now + 61);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it("a_second_key_of_the_same_tenant_has_its_own_bucket", async () => {
    const { tenantId, key } = await tenantWithKey(["read"]);
    for (let i = 0; i < 3; i++) await call("GET", "/offerings?limit=1", { key });
    const second = await newKey(tenantId, ["read"]);
    const res = await call("GET", "/offerings?limit=1", { key: second.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("199");
  });
});

// The limiter runs only after authentication: a request whose key fails authentication counts
// against neither the key nor its tenant.
describe("/api/v1 requests that fail authentication", { timeout: 60_000 }, () => {
  it("401_wrong_secret_or_revoked_known_key_takes_no_tokens", async () => {
    const { tenantId, key, keyId } = await tenantWithKey(["read"]);
    // Exact counts need one window (see above): start well inside one.
    startOfNextWindow();
    const first = await call("GET", "/offerings?limit=1", { key });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("199");

    const wrongSecret = key.slice(0, -6) + (key.endsWith("000000") ? "111111" : "000000");
    for (let i = 0; i < 5; i++) {
      const res = await call("GET", "/offerings?limit=1", { key: wrongSecret });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorOf("unauthorized", "unknown or revoked api key"));
      expect(res.headers.get("x-ratelimit-remaining")).toBeNull();
    }
    const second = await call("GET", "/offerings?limit=1", { key });
    expect(second.headers.get("x-ratelimit-remaining")).toBe("198");

    await revokeApiKey(scopeToTenant((await openDatabase()).prisma, tenantId), keyId, OPERATOR);
    for (let i = 0; i < 5; i++) expect((await call("GET", "/offerings?limit=1", { key })).status).toBe(401);
    const decision = await limitApiRequest({ keyId, tenantId });
    expect(decision.headers["X-RateLimit-Remaining"]).toBe("197");
  });
});
