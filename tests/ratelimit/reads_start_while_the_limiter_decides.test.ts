// A read starts while the rate limiter decides (so the limiter's round trip hides behind it); a
// write waits for the decision. A refused request answers the same 429 either way, and a caller
// refused in this process stops costing a read per request.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { limitApiRequest, warmUpRateLimiter } from "../../server/ratelimit";
import { dbOperationCount, getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await warmUpRateLimiter();
});

/** A key that has made one admitted request (so its once-a-minute last-used write is done) and then used up its bucket. */
async function refusedKey() {
  const k = await tenantWithKey(["read", "offerings:write"]);
  // Stay inside one window: across a boundary the sliding window starts to free tokens again.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 45_000) await sleep(60_000 - intoWindow + 50);
  expect((await call("GET", "/offerings?limit=1", { key: k.key })).status).toBe(200);
  for (let i = 0; i < 300; i++) {
    if (!(await limitApiRequest({ keyId: k.keyId, tenantId: k.tenantId })).allowed) return k;
  }
  throw new Error("the key's bucket never ran out");
}

describe("reads and writes of a refused caller", { timeout: 90_000 }, () => {
  it("429_refused_write_creates_nothing", async () => {
    const { key, tenantId } = await refusedKey();
    const res = await call("POST", "/offerings", { key, body: { title: "Never", price: "1.00", price_currency: "USD" } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
    await sleep(100); // a write started in the background would have landed by now
    expect(await scopeToTenant(await getDb(), tenantId).offering.count()).toBe(0);
  });

  it("429_refused_read_answers_only_the_refusal_and_later_refusals_run_no_read", async () => {
    const { key } = await refusedKey();
    await sleep(50);
    const before = dbOperationCount();
    const first = await call("GET", "/offerings?limit=1", { key });
    expect(first.status).toBe(429);
    expect(first.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
    expect(first.headers.get("x-ratelimit-remaining")).toBe("0");
    await sleep(50);
    const afterFirst = dbOperationCount();
    // The key lookup, and the read that started while the limiter decided (its answer discarded).
    expect(afterFirst - before).toBe(2);

    for (let i = 0; i < 3; i++) {
      const res = await call("GET", "/offerings?limit=1", { key });
      expect(res.status).toBe(429);
      expect(res.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
    }
    await sleep(50);
    // Refused once in this process: until its window resets, the caller waits for the decision.
    expect(dbOperationCount() - afterFirst).toBe(3);
  });
});
