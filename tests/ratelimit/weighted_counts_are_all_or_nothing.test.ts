// A weighted count (an MCP batch: one check for several messages) is admitted only when all of its
// weight fits, in the same buckets as single counts; a refused one counts nothing, in any layer.
// On a real Redis (through the in-memory fallback wrapper production uses) and in process.
import { describe, expect, it } from "vitest";
import { createSurfaceLimiters, withMemoryFallback } from "../../server/ratelimit";
import { DEFAULTS, STORE_KINDS, freezeDateAt, restoreDateAfterEach, useStore } from "./store-fixtures";

const MINUTE_START = Date.UTC(2030, 0, 1, 0, 0, 0);
const T0 = MINUTE_START + 30_000;
const RESET = MINUTE_START + 60_000;
const RESET_S = String(RESET / 1000);

describe.each(STORE_KINDS)("weighted counts, %s store", (kind) => {
  const store = useStore(kind);
  restoreDateAfterEach();

  it("a_weight_that_does_not_fit_is_refused_and_counts_nothing_in_the_bucket_single_counts_share", async () => {
    freezeDateAt(T0);
    const s = store();
    for (let i = 0; i < 7; i++) await s.limit("key:k", 10, 60_000);
    expect(await s.limit("key:k", 10, 60_000, 4)).toEqual({ success: false, limit: 10, remaining: 0, reset: RESET });
    expect(await s.limit("key:k", 10, 60_000, 3)).toEqual({ success: true, limit: 10, remaining: 0, reset: RESET });
    expect(await s.limit("key:k", 10, 60_000)).toEqual({ success: false, limit: 10, remaining: 0, reset: RESET });
    // A weighted refund gives the whole weight back.
    expect(await s.limit("key:k", 10, 60_000, -3)).toEqual({ success: true, limit: 10, remaining: 3, reset: RESET });
    // Next window, halfway: the previous window's 7 count floor(7 * 0.5) = 3.
    freezeDateAt(T0 + 60_000);
    expect(await s.limit("key:k", 10, 60_000, 8)).toEqual({ success: false, limit: 10, remaining: 0, reset: RESET + 60_000 });
    expect(await s.limit("key:k", 10, 60_000, 7)).toEqual({ success: true, limit: 10, remaining: 0, reset: RESET + 60_000 });
  });

  it("429_a_weighted_check_the_key_layer_refuses_gives_the_tenant_its_weight_back", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), { ...DEFAULTS, perKey: 8, perTenant: 100 });
    expect(await api.check({ key: "k1", tenant: "t1" }, 5)).toEqual({
      allowed: true,
      headers: { "X-RateLimit-Limit": "8", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": RESET_S },
    });
    expect(await api.check({ key: "k1", tenant: "t1" }, 5)).toEqual({
      allowed: false,
      message: "per-key rate limit exceeded",
      headers: { "Retry-After": "30", "X-RateLimit-Limit": "8", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
    });
    // The tenant holds the first 5 only: 95 left, and a weight of 3 still fits the key.
    expect((await api.check({ key: "k2", tenant: "t1" })).headers["X-RateLimit-Remaining"]).toBe("7");
    const { api: tenantView } = createSurfaceLimiters(store(), { ...DEFAULTS, perKey: 1000, perTenant: 100 });
    expect((await tenantView.check({ tenant: "t1" })).headers["X-RateLimit-Remaining"]).toBe("93");
    expect((await api.check({ key: "k1", tenant: "t1" }, 3)).headers["X-RateLimit-Remaining"]).toBe("0");
  });

  it("429_a_burst_of_30_concurrent_weight_3_checks_on_a_limit_of_20_admits_exactly_6", async () => {
    freezeDateAt(T0);
    const resilient = withMemoryFallback(store());
    const { api } = createSurfaceLimiters(resilient, { ...DEFAULTS, perKey: 20 });
    const decisions = await Promise.all(Array.from({ length: 30 }, () => api.check({ key: "k", tenant: "t" }, 3)));
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted.map((d) => Number(d.headers["X-RateLimit-Remaining"])).sort((a, b) => a - b)).toEqual([2, 5, 8, 11, 14, 17]);
    // 18 of 20 used: a weight of 2 fits exactly, then nothing does.
    expect((await api.check({ key: "k", tenant: "t" }, 2)).headers["X-RateLimit-Remaining"]).toBe("0");
    expect((await api.check({ key: "k", tenant: "t" })).allowed).toBe(false);
    await resilient.close();
  });
});
