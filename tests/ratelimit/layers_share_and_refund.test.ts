import { describe, expect, it } from "vitest";
import { createLayeredLimiter, createSurfaceLimiters } from "../../server/ratelimit";
import { DEFAULTS, STORE_KINDS, freezeDateAt, restoreDateAfterEach, useStore } from "./store-fixtures";

const MINUTE_START = Date.UTC(2030, 0, 1, 0, 0, 0);
const T0 = MINUTE_START + 30_000;
const RESET_S = String((MINUTE_START + 60_000) / 1000);
const SMALL = { ...DEFAULTS, perKey: 3, perTenant: 10, perUser: 2, perTool: 2, perIp: 4 };

describe.each(STORE_KINDS)("layers, %s store", (kind) => {
  const store = useStore(kind);
  restoreDateAfterEach();

  it("refunds the tenant token of a request the key layer refused, so refused requests use up no tenant budget", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), SMALL);
    const outcomes: string[] = [];
    // key-a sends 5 (3 admitted, 2 refused by its key layer), then keys b, c, d send 4 each.
    for (const [key, n] of [
      ["a", 5],
      ["b", 4],
      ["c", 4],
      ["d", 4],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const d = await api.check({ key: `key-${key}`, tenant: "t1" });
        outcomes.push(d.allowed ? `${key}:ok` : `${key}:${d.message}`);
      }
    }
    expect(outcomes).toEqual([
      "a:ok",
      "a:ok",
      "a:ok",
      "a:per-key rate limit exceeded",
      "a:per-key rate limit exceeded",
      "b:ok",
      "b:ok",
      "b:ok",
      "b:per-key rate limit exceeded",
      "c:ok",
      "c:ok",
      "c:ok",
      "c:per-key rate limit exceeded",
      // 9 admitted so far: one tenant token left.
      "d:ok",
      "d:per-tenant rate limit exceeded",
      "d:per-tenant rate limit exceeded",
      "d:per-tenant rate limit exceeded",
    ]);
    // d's tenant refusals gave its key tokens back: d has used 1 of 3.
    freezeDateAt(T0 + 60_000); // next window, previous weighted at 50%: tenant floor(0.5*10)=5, key-d floor(0.5*1)=0
    expect((await api.check({ key: "key-d", tenant: "t1" })).headers["X-RateLimit-Remaining"]).toBe("2");
  });

  it("reports the per-key layer on success even when the tenant layer has fewer left", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), { ...SMALL, perKey: 100, perTenant: 5 });
    expect(await api.check({ key: "k", tenant: "t1" })).toEqual({
      allowed: true,
      headers: { "X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "99", "X-RateLimit-Reset": RESET_S },
    });
  });

  it("shares one tenant bucket between API keys, dashboard users and agent tools", async () => {
    freezeDateAt(T0);
    const { api, dashboard, agentTool } = createSurfaceLimiters(store(), { ...SMALL, perTenant: 5 });
    expect((await api.check({ key: "k1", tenant: "t1" })).allowed).toBe(true);
    expect((await api.check({ key: "k2", tenant: "t1" })).allowed).toBe(true);
    expect((await dashboard.check({ user: "u1", tenant: "t1" })).allowed).toBe(true);
    expect((await dashboard.check({ user: "u2", tenant: "t1" })).allowed).toBe(true);
    expect(await agentTool.check({ tool: "t1:search", tenant: "t1" })).toEqual({
      allowed: true,
      headers: { "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": RESET_S },
    });
    const refused = await dashboard.check({ user: "u3", tenant: "t1" });
    expect(refused).toEqual({
      allowed: false,
      message: "per-tenant rate limit exceeded",
      headers: { "Retry-After": "30", "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
    });
    // A dashboard user outside any tenant is limited per user only.
    expect((await dashboard.check({ user: "u3", tenant: null })).allowed).toBe(true);
  });

  it("limits a dashboard user, an agent tool per tenant, and an inbound IP with their own messages", async () => {
    freezeDateAt(T0);
    const { dashboard, agentTool, inbound } = createSurfaceLimiters(store(), SMALL);
    const run = async (n: number, f: () => Promise<{ allowed: boolean; message?: string }>) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await f());
      return out.map((d) => (d.allowed ? "ok" : d.message));
    };
    expect(await run(3, () => dashboard.check({ user: "u1", tenant: null }))).toEqual(["ok", "ok", "per-user rate limit exceeded"]);
    expect(await run(3, () => agentTool.check({ tool: "t1:crm", tenant: "t1" }))).toEqual(["ok", "ok", "per-tool rate limit exceeded"]);
    expect(await run(1, () => agentTool.check({ tool: "t1:search", tenant: "t1" }))).toEqual(["ok"]);
    expect(await run(1, () => agentTool.check({ tool: "t2:crm", tenant: "t2" }))).toEqual(["ok"]);
    expect(await run(5, () => inbound.check({ ip: "2001:db8::1" }))).toEqual(["ok", "ok", "ok", "ok", "per-ip rate limit exceeded"]);
    expect(await run(1, () => inbound.check({ ip: "203.0.113.9" }))).toEqual(["ok"]);
  });

  it("when several layers refuse, reports the one that frees up last", async () => {
    freezeDateAt(MINUTE_START + 1000);
    const limiter = createLayeredLimiter({
      store: store(),
      layers: [
        { name: "key", limit: 1, windowMs: 10_000, message: "per-key rate limit exceeded" },
        { name: "tenant", limit: 1, windowMs: 60_000, message: "per-tenant rate limit exceeded" },
      ],
    });
    expect((await limiter.check({ key: "k", tenant: "t" })).allowed).toBe(true);
    expect(await limiter.check({ key: "k", tenant: "t" })).toEqual({
      allowed: false,
      message: "per-tenant rate limit exceeded",
      headers: { "Retry-After": "59", "X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
    });
  });

  it("admits everything without headers when disabled", async () => {
    const { api } = createSurfaceLimiters(store(), { ...SMALL, disabled: true });
    for (let i = 0; i < 20; i++) expect(await api.check({ key: "k", tenant: "t" })).toEqual({ allowed: true, headers: {} });
  });
});
