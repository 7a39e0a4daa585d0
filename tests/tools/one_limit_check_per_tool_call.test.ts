// A tool call is limited by ONE check over three layers: per (tenant, tool), the key's own bucket
// and the tenant's shared bucket, each counted once. With the tenant's budget at 10 (and the key's
// at 10 in the second case), exactly 10 tool calls are admitted and the 11th is refused by that
// layer with its exact headers; a layer counted twice per call would refuse from the 6th.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resetRateLimitStoreForTests } from "../../server/ratelimit";
import { newKey, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { startOfNextWindow } from "../helpers/rate-limit-clock";
import { makeConversation } from "../helpers/conversations";

const saved = { tenant: process.env.RATE_LIMIT_PER_TENANT, key: process.env.RATE_LIMIT_PER_KEY };
const restore = (name: string, value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));

async function limitsAre(perTenant: number, perKey: number) {
  process.env.RATE_LIMIT_PER_TENANT = String(perTenant);
  process.env.RATE_LIMIT_PER_KEY = String(perKey);
  await resetRateLimitStoreForTests(); // the next check re-reads the environment
}

describe("one limit check per tool call", { timeout: 60_000 }, () => {
  beforeEach(() => startOfNextWindow());
  afterAll(async () => {
    restore("RATE_LIMIT_PER_TENANT", saved.tenant);
    restore("RATE_LIMIT_PER_KEY", saved.key);
    await resetRateLimitStoreForTests();
  });

  it("the_tenant_layer_is_charged_once_per_tool_call_so_the_11th_of_10_is_the_429", async () => {
    await limitsAre(10, 1000);
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    for (let i = 1; i <= 10; i++) {
      const res =
        i % 2
          ? await callTool(key, "search_offerings", { query: "flat" })
          : await callTool(key, "get_conversation_context", { conversation_id: conversation.id });
      expect(res.status).toBe(200);
      // The tool layer's headers: each tool counted once.
      expect(res.headers.get("x-ratelimit-limit")).toBe("50");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(50 - Math.ceil(i / 2)));
    }
    // Another key of the tenant shares the tenant's bucket: it is spent.
    const otherKey = (await newKey(tenantId)).key;
    const refused = await callTool(otherKey, "search_offerings", { query: "flat" });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: "rate_limited", message: "per-tenant rate limit exceeded" } });
    expect(refused.headers.get("x-ratelimit-limit")).toBe("10");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("the_key_layer_is_charged_once_per_tool_call_so_the_11th_of_10_is_the_429", async () => {
    await limitsAre(1000, 10);
    const { tenantId, key } = await tenantWithKey();
    for (let i = 1; i <= 10; i++) expect((await callTool(key, "search_offerings", {})).status).toBe(200);
    const refused = await callTool(key, "search_offerings", {});
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: "rate_limited", message: "per-key rate limit exceeded" } });
    expect(refused.headers.get("x-ratelimit-limit")).toBe("10");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    // The key's refusal took nothing from the tool's or the tenant's buckets: another key still calls.
    const other = await callTool((await newKey(tenantId)).key, "search_offerings", {});
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("39");
  });
});
