// One straight path: authenticate, limit, authorize, read the input, run. A request the limiter
// refuses runs nothing past the key lookup: no read, no write, and its body is never read.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventually } from "../helpers/webhook-consumer";
import { limitApiRequest, warmUpRateLimiter } from "../../server/ratelimit";
import { dbOperationCount, openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { handleRestRequest } from "../../server/http/rest-bridge";
import { startOfNextWindow } from "../helpers/rate-limit-clock";

beforeAll(async () => {
  await warmUpRateLimiter();
});

/** A key that made one admitted request (its once-a-minute last-used write landed) and then used up its bucket. */
async function refusedKey() {
  const k = await tenantWithKey(["read", "offerings:write"]);
  // Stay inside one window: across a boundary the sliding window starts to free tokens again.
  startOfNextWindow();
  expect((await call("GET", "/offerings?limit=1", { key: k.key })).status).toBe(200);
  const db = (await openDatabase()).prisma;
  await eventually(async () => (await db.apiKey.findUniqueOrThrow({ where: { id: k.keyId } })).lastUsedAt);
  for (let i = 0; i < 300; i++) {
    if (!(await limitApiRequest({ keyId: k.keyId, tenantId: k.tenantId })).allowed) return k;
  }
  throw new Error("the key's bucket never ran out");
}

describe("requests the limiter refuses", { timeout: 90_000 }, () => {
  it("429_refused_write_creates_nothing", async () => {
    const { key, tenantId } = await refusedKey();
    const res = await call("POST", "/offerings", { key, body: { title: "Never", price: "1.00", price_currency: "USD" } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
    expect(await scopeToTenant((await openDatabase()).prisma, tenantId).offering.count()).toBe(0);
  });

  it("429_refused_read_runs_only_the_key_lookup", async () => {
    const { key } = await refusedKey();
    const before = dbOperationCount();
    for (let i = 0; i < 4; i++) {
      const res = await call("GET", "/offerings?limit=1", { key });
      expect(res.status).toBe(429);
      expect(res.body).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    }
    expect(dbOperationCount() - before).toBe(4);
  });

  it("429_refused_write_is_answered_without_reading_a_body_that_never_finishes", async () => {
    const { key } = await refusedKey();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"title":"slow'));
      }, // never closed
    });
    const res = await handleRestRequest(
      new Request("http://127.0.0.1/api/v1/offerings", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit),
    );
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual(errorOf("rate_limited", "per-key rate limit exceeded"));
  });
});
