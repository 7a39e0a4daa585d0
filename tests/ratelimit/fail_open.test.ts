// The limiter admits requests when its store is down or slow, invents no headers for them, logs
// once per interval, and resumes limiting when the store comes back.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import {
  createLayeredLimiter,
  createLimiterRedisClient,
  createMemoryStore,
  createRedisStore,
  createSurfaceLimiters,
  createUpstashStore,
  type LimitStore,
} from "../../server/ratelimit";
import { RedisServer } from "../helpers/redis-server";
import { DEFAULTS, freezeDateAt, readyClient, restoreDateAfterEach } from "./store-fixtures";

// 200 ms rather than the default 50 so a starved test machine does not time out the calls made
// while Redis is healthy; the bounds below stay far under the 2 s pause.
const CONFIG = { ...DEFAULTS, perKey: 3, timeoutMs: 200 };
const WELL_UNDER_MS = 1000;
const ADMITTED_BY_FAILURE = { allowed: true, headers: {} };

let warn: MockInstance<typeof console.warn>;
let savedLogLevel: string | undefined;
beforeAll(() => {
  savedLogLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "warn"; // the test setup silences logs; these tests read the warning
});
afterAll(() => {
  if (savedLogLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLogLevel;
});
beforeEach(() => {
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  warn.mockRestore();
});
restoreDateAfterEach();

const warnings = () => warn.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await f();
  return { value, ms: performance.now() - start };
}

/** Polls with throwaway identities until the store answers again (headers present). */
async function waitForRecovery(check: (i: number) => Promise<{ headers: Record<string, string> }>): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let i = 0; ; i++) {
    if ((await check(i)).headers["X-RateLimit-Limit"] !== undefined) return;
    if (Date.now() > deadline) throw new Error("limiter did not recover");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("fail-open on a real redis-server", () => {
  let server: RedisServer;
  beforeEach(async () => {
    server = await RedisServer.start();
  });
  afterEach(async () => {
    await server.stop();
  });

  it("admits with no headers and no throw while Redis is killed, logs once, and limits again after a restart on the same port", async () => {
    const client = await readyClient(server.url);
    const { api } = createSurfaceLimiters(createRedisStore(client), CONFIG);
    try {
      for (let i = 0; i < 3; i++) expect((await api.check({ key: "key-a", tenant: "t" })).allowed).toBe(true);
      expect((await api.check({ key: "key-a", tenant: "t" })).allowed).toBe(false);

      await server.kill();
      for (let i = 0; i < 20; i++) {
        const { value, ms } = await timed(() => api.check({ key: "key-a", tenant: "t" }));
        expect(value).toEqual(ADMITTED_BY_FAILURE); // even the exhausted key
        expect(ms).toBeLessThan(WELL_UNDER_MS);
      }
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({
        level: "warn",
        msg: "rate limiter store unavailable; admitting requests (fail-open)",
        store: "redis",
        suppressed_since_last_warning: 0,
      });

      await server.restart(); // comes back empty
      await waitForRecovery((i) => api.check({ key: `probe-${i}`, tenant: `probe-${i}` }));
      const after = [];
      for (let i = 0; i < 4; i++) after.push(await api.check({ key: "key-a", tenant: "t" }));
      expect(after.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(after[0]!.headers["X-RateLimit-Remaining"]).toBe("2");
      expect(warnings()).toHaveLength(1);
    } finally {
      client.disconnect();
    }
  });

  it("a process's first calls wait for the first connection and are limited, not admitted by failure", async () => {
    const client = createLimiterRedisClient(server.url); // still connecting
    expect(client.status).not.toBe("ready");
    const { api } = createSurfaceLimiters(createRedisStore(client), CONFIG);
    try {
      const first = await api.check({ key: "key-a", tenant: "t" });
      expect(first).toEqual({ allowed: true, headers: { "X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "2", "X-RateLimit-Reset": expect.stringMatching(/^\d+$/) } });
      expect(warnings()).toHaveLength(0);
    } finally {
      client.disconnect();
    }
  });

  it("with Redis unreachable from the start, calls are admitted within the timeout (no headers)", async () => {
    await server.kill();
    const client = createLimiterRedisClient(server.url);
    const { api } = createSurfaceLimiters(createRedisStore(client), CONFIG);
    try {
      for (let i = 0; i < 3; i++) {
        const { value, ms } = await timed(() => api.check({ key: "key-a", tenant: "t" }));
        expect(value).toEqual(ADMITTED_BY_FAILURE);
        expect(ms).toBeLessThan(WELL_UNDER_MS);
      }
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({ store: "redis", reason: "timeout" });
    } finally {
      client.disconnect();
    }
  });

  it("admits within the timeout while Redis is paused (CLIENT PAUSE), then limits again", async () => {
    const client = await readyClient(server.url);
    const { api } = createSurfaceLimiters(createRedisStore(client), CONFIG);
    try {
      expect((await api.check({ key: "key-a", tenant: "t" })).headers["X-RateLimit-Remaining"]).toBe("2");
      await server.pause(2000);
      const { value, ms } = await timed(() => api.check({ key: "key-a", tenant: "t" }));
      expect(value).toEqual(ADMITTED_BY_FAILURE);
      expect(ms).toBeLessThan(WELL_UNDER_MS); // the timeout is 200 ms; the pause is 2000 ms
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({ store: "redis", reason: "timeout" });

      await waitForRecovery((i) => api.check({ key: `probe-${i}`, tenant: `probe-${i}` }));
      // key-a has used 1 (plus perhaps the abandoned call, if Redis ran it after the pause).
      const remaining = (await api.check({ key: "key-a", tenant: "t" })).headers["X-RateLimit-Remaining"];
      expect(["0", "1"]).toContain(remaining);
    } finally {
      client.disconnect();
    }
  });
});

describe("fail-open on the Upstash REST store", () => {
  let http: Server;
  let url: string;
  beforeAll(async () => {
    http = createServer(() => {}); // accepts and never answers
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });

  it("admits within the timeout when the REST endpoint hangs", async () => {
    const { api } = createSurfaceLimiters(createUpstashStore({ url, token: "test", requestTimeoutMs: 300 }), CONFIG);
    const { value, ms } = await timed(() => api.check({ key: "k", tenant: "t" }));
    expect(value).toEqual(ADMITTED_BY_FAILURE);
    expect(ms).toBeLessThan(WELL_UNDER_MS);
    expect(warnings()[0]).toMatchObject({ store: "upstash", reason: "timeout" });
  });

  it("admits when the REST endpoint refuses connections", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const store = createUpstashStore({ url: `http://127.0.0.1:${port}`, token: "test" });
    const { api } = createSurfaceLimiters(store, { ...CONFIG, timeoutMs: 2000 });
    expect(await api.check({ key: "k", tenant: "t" })).toEqual(ADMITTED_BY_FAILURE);
    expect(warnings()[0]).toMatchObject({ store: "upstash", reason: "error" });
  });
});

describe("fail-open bookkeeping", () => {
  /** A memory store whose calls for identifiers matching `failing` throw. */
  function flakyStore(failing: { pattern: RegExp | null }): LimitStore {
    const inner = createMemoryStore();
    return {
      ...inner,
      kind: "redis",
      limit: async (id, limit, windowMs, rate) => {
        if (failing.pattern?.test(id)) throw new Error("connection refused");
        return inner.limit(id, limit, windowMs, rate);
      },
    };
  }
  const layers = [
    { name: "key", limit: 2, windowMs: 60_000, message: "per-key rate limit exceeded" },
    { name: "tenant", limit: 100, windowMs: 60_000, message: "per-tenant rate limit exceeded" },
  ];

  it("logs once per interval, counting the failures it did not log", async () => {
    const base = Date.UTC(2030, 0, 1);
    freezeDateAt(base);
    const failing = { pattern: /./ as RegExp | null };
    const limiter = createLayeredLimiter({ store: flakyStore(failing), layers, warnIntervalMs: 30_000 });
    for (let i = 0; i < 50; i++) expect(await limiter.check({ key: "k", tenant: "t" })).toEqual(ADMITTED_BY_FAILURE);
    expect(warnings()).toHaveLength(1);
    freezeDateAt(base + 29_999);
    await limiter.check({ key: "k", tenant: "t" });
    expect(warnings()).toHaveLength(1);
    freezeDateAt(base + 30_000);
    await limiter.check({ key: "k", tenant: "t" });
    // 50 requests x 2 layers, then 1 x 2 suppressed, then this one logged (its second layer suppressed).
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ reason: "error", error: "connection refused", suppressed_since_last_warning: 101 });
  });

  it("uses the layers that answered: a failed tenant layer still lets the key layer refuse, a failed key layer reports no headers", async () => {
    freezeDateAt(Date.UTC(2030, 0, 1, 0, 0, 30));
    const failing = { pattern: /^tenant:/ as RegExp | null };
    const limiter = createLayeredLimiter({ store: flakyStore(failing), layers });
    expect((await limiter.check({ key: "k", tenant: "t" })).headers["X-RateLimit-Remaining"]).toBe("1");
    expect((await limiter.check({ key: "k", tenant: "t" })).allowed).toBe(true);
    expect(await limiter.check({ key: "k", tenant: "t" })).toMatchObject({ allowed: false, message: "per-key rate limit exceeded" });

    failing.pattern = /^key:/;
    expect(await limiter.check({ key: "k2", tenant: "t" })).toEqual(ADMITTED_BY_FAILURE);
  });
});
