// The per-(tenant, tool) layer: 50 calls a minute per tool, on top of the per-key and per-tenant
// layers; its 429 names the tool layer and carries that layer's headers, and another tool of the
// same tenant still answers.
import { describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { startOfNextWindow } from "../helpers/rate-limit-clock";
import { makeConversation } from "../helpers/conversations";

describe("per-tool rate limit", { timeout: 120_000 }, () => {
  it("the_51st_call_of_one_tool_in_a_minute_is_a_429_while_another_tool_still_answers", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    startOfNextWindow();
    for (let i = 1; i <= 50; i++) {
      const res = await callTool(key, "search_offerings", { query: "flat" });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("50");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(50 - i));
    }
    const refused = await callTool(key, "search_offerings", { query: "flat" });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: "rate_limited", message: "per-tool rate limit exceeded" } });
    expect(refused.headers.get("x-ratelimit-limit")).toBe("50");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);

    const other = await callTool(key, "get_conversation_context", { conversation_id: conversation.id });
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("49");
  });

  it("a_burst_of_400_concurrent_calls_admits_no_more_than_50", async () => {
    const { key } = await tenantWithKey();
    startOfNextWindow();
    const answers = await Promise.all(Array.from({ length: 400 }, () => callTool(key, "search_offerings", {})));
    const admitted = answers.filter((a) => a.status === 200).length;
    expect(admitted).toBe(50);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(350);
    expect(answers.some((a) => a.body?.error?.message === "per-tool rate limit exceeded")).toBe(true);
  });

  it("another_tenants_calls_do_not_count", async () => {
    const busy = await tenantWithKey();
    startOfNextWindow();
    await Promise.all(Array.from({ length: 50 }, () => callTool(busy.key, "search_offerings", {})));
    expect((await callTool(busy.key, "search_offerings", {})).status).toBe(429);
    const calm = await tenantWithKey();
    expect((await callTool(calm.key, "search_offerings", {})).status).toBe(200);
  });
});
