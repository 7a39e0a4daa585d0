import { describe, expect, it, vi } from "vitest";
import { createLayeredLimiter, createSurfaceLimiters } from "../../server/ratelimit";
import { startOfNextWindow } from "../helpers/rate-limit-clock";
import { DEFAULTS, STORE_KINDS, freezeDateAt, restoreDateAfterEach, useStore } from "./store-fixtures";

const CONFIG = DEFAULTS;
const MINUTE_START = Date.UTC(2030, 0, 1, 0, 0, 0);
const T0 = MINUTE_START + 10_500; // 10.5 s into a one-minute window: Retry-After rounds 49.5 up
const RESET_S = String((MINUTE_START + 60_000) / 1000);

describe.each(STORE_KINDS)("sliding window, %s store", (kind) => {
  const store = useStore(kind);
  restoreDateAfterEach();

  it("admits exactly 200 of 205 requests of one key at the default limits and refuses the 201st with exact headers", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), CONFIG);
    const decisions = [];
    for (let i = 0; i < 205; i++) decisions.push(await api.check({ key: "key-a", tenant: "tenant-1" }));

    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    decisions.slice(0, 200).forEach((d, i) => {
      expect(d).toEqual({
        allowed: true,
        headers: { "X-RateLimit-Limit": "200", "X-RateLimit-Remaining": String(199 - i), "X-RateLimit-Reset": RESET_S },
      });
    });
    for (const d of decisions.slice(200)) {
      expect(d).toEqual({
        allowed: false,
        message: "per-key rate limit exceeded",
        headers: { "Retry-After": "50", "X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
      });
    }
  });

  it("gives two keys of one tenant separate buckets", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), CONFIG);
    for (let i = 0; i < 200; i++) expect((await api.check({ key: "key-a", tenant: "tenant-1" })).allowed).toBe(true);
    expect((await api.check({ key: "key-a", tenant: "tenant-1" })).allowed).toBe(false);
    expect(await api.check({ key: "key-b", tenant: "tenant-1" })).toEqual({
      allowed: true,
      headers: { "X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "199", "X-RateLimit-Reset": RESET_S },
    });
  });

  it("refuses on the tenant layer at the default 5000/min when 26 keys of one tenant each stay under 200", async () => {
    freezeDateAt(T0);
    const { api } = createSurfaceLimiters(store(), CONFIG);
    let admitted = 0;
    for (let k = 0; k < 25; k++) {
      const batch = await Promise.all(Array.from({ length: 200 }, () => api.check({ key: `key-${k}`, tenant: "tenant-1" })));
      admitted += batch.filter((d) => d.allowed).length;
    }
    expect(admitted).toBe(5000);
    expect(await api.check({ key: "key-25", tenant: "tenant-1" })).toEqual({
      allowed: false,
      message: "per-tenant rate limit exceeded",
      headers: { "Retry-After": "50", "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
    });
    // Another tenant is untouched.
    expect((await api.check({ key: "key-x", tenant: "tenant-2" })).allowed).toBe(true);
  });

  it("slides: the previous window's count is weighted by its remaining overlap", async () => {
    const windowMs = 1000;
    const limiter = createLayeredLimiter({
      store: store(),
      layers: [{ name: "key", limit: 10, windowMs, message: "per-key rate limit exceeded" }],
    });
    const base = Date.UTC(2030, 0, 1, 0, 0, 0); // a window boundary
    const burst = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await limiter.check({ key: "k" }));
      return out;
    };
    const allowedCount = (ds: { allowed: boolean }[]) => ds.filter((d) => d.allowed).length;

    freezeDateAt(base + 100);
    expect(allowedCount(await burst(12))).toBe(10);

    // 25% into the next window: 75% of the previous 10 still count (floor 7.5 = 7), so 3 more pass.
    freezeDateAt(base + windowMs + 250);
    const second = await burst(5);
    expect(allowedCount(second)).toBe(3);
    expect(second[0]!.headers["X-RateLimit-Remaining"]).toBe("2"); // 10 - (1 + 7)
    expect(second[3]).toEqual({
      allowed: false,
      message: "per-key rate limit exceeded",
      headers: {
        "Retry-After": "1",
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": String((base + 2 * windowMs) / 1000),
      },
    });

    // 60% in: floor(0.4 * 10) = 4 from before + 3 now, so 3 more pass.
    freezeDateAt(base + windowMs + 600);
    expect(allowedCount(await burst(5))).toBe(3);

    // Two windows later nothing overlaps any more: the full 10 again.
    freezeDateAt(base + 3 * windowMs + 1);
    expect(allowedCount(await burst(12))).toBe(10);
  });

  it("slides in real time with a 1 s window", async () => {
    const limiter = createLayeredLimiter({
      store: store(),
      layers: [{ name: "key", limit: 5, windowMs: 1000, message: "per-key rate limit exceeded" }],
    });
    // Start at the beginning of a window (the clock moved there, running on in real time) so the burst cannot straddle a boundary.
    startOfNextWindow(1000);
    for (let i = 0; i < 5; i++) expect((await limiter.check({ key: "k" })).allowed).toBe(true);
    const refused = await limiter.check({ key: "k" });
    expect(refused.allowed).toBe(false);
    expect(refused.headers["Retry-After"]).toBe("1");
    // After more than two window lengths the previous window is empty whatever the phase: the clock
    // is moved there rather than waited for.
    vi.setSystemTime(Date.now() + 2100);
    expect((await limiter.check({ key: "k" })).headers["X-RateLimit-Remaining"]).toBe("4");
  });
});
