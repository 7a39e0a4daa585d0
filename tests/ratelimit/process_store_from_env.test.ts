// The process-wide limiters: configuration from the environment, store chosen once per process.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  limitAgentToolRequest,
  limitApiRequest,
  limitDashboardRequest,
  limitFailedAuthentication,
  limitInboundRequest,
  closeRateLimitStore,
  rateLimitConfigFromEnv,
  resetRateLimitStoreForTests,
} from "../../server/ratelimit";
import { RedisServer } from "../helpers/redis-server";

const VARS = [
  "REDIS_URL",
  "UPSTASH_REDIS_REST_URL",
  "UPSTASH_REDIS_REST_TOKEN",
  "RATE_LIMIT_DISABLED",
  "RATE_LIMIT_PER_KEY",
  "RATE_LIMIT_PER_TENANT",
  "RATE_LIMIT_PER_USER",
  "RATE_LIMIT_PER_TOOL",
  "RATE_LIMIT_PER_IP",
  "RATE_LIMIT_STORE_TIMEOUT_MS",
  "RATE_LIMIT_FAILED_AUTH_PER_IP",
  "RATE_LIMIT_KEY_PREFIX",
];
const saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]));
function setEnv(values: Record<string, string>) {
  for (const v of VARS) delete process.env[v];
  Object.assign(process.env, values);
}
afterEach(async () => {
  await resetRateLimitStoreForTests();
});
afterAll(() => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

describe("rateLimitConfigFromEnv", () => {
  it("defaults to the specification's limits, a one-minute window, a 1 s store timeout and the in-process store", () => {
    expect(rateLimitConfigFromEnv({})).toEqual({
      disabled: false,
      windowMs: 60_000,
      storeTimeoutMs: 1000,
      keyPrefix: "rl",
      perKey: 200,
      perTenant: 5000,
      perUser: 200,
      perTool: 50,
      perIp: 500,
      perFailedAuthIp: 500,
      store: { kind: "memory" },
    });
  });

  it("prefers Upstash over REDIS_URL, and reads overrides", () => {
    const env = { UPSTASH_REDIS_REST_URL: "https://x.upstash.io", UPSTASH_REDIS_REST_TOKEN: "tok", REDIS_URL: "redis://h:1" };
    expect(rateLimitConfigFromEnv(env).store).toEqual({ kind: "upstash", url: "https://x.upstash.io", token: "tok" });
    expect(rateLimitConfigFromEnv({ REDIS_URL: "redis://h:1" }).store).toEqual({ kind: "redis", url: "redis://h:1" });
    const c = rateLimitConfigFromEnv({
      RATE_LIMIT_PER_KEY: "7",
      RATE_LIMIT_WINDOW_SECONDS: "2",
      RATE_LIMIT_DISABLED: "1",
      RATE_LIMIT_STORE_TIMEOUT_MS: "250",
      RATE_LIMIT_FAILED_AUTH_PER_IP: "9",
    });
    expect([c.perKey, c.windowMs, c.disabled, c.storeTimeoutMs, c.perFailedAuthIp]).toEqual([7, 2000, true, 250, 9]);
  });

  it("rejects malformed values, naming the variable", () => {
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_PER_KEY: "10/min" })).toThrow('RATE_LIMIT_PER_KEY must be a positive integer, got "10/min"');
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_STORE_TIMEOUT_MS: "0" })).toThrow("RATE_LIMIT_STORE_TIMEOUT_MS");
    expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_FAILED_AUTH_PER_IP: "-1" })).toThrow("RATE_LIMIT_FAILED_AUTH_PER_IP");
    expect(() => rateLimitConfigFromEnv({ UPSTASH_REDIS_REST_URL: "https://x" })).toThrow("UPSTASH_REDIS_REST_TOKEN");
    // The prefix ends up in SCAN MATCH patterns and before a ':': no glob characters, no separator.
    for (const bad of ["a:b", "rl*", "a b", "x".repeat(65)])
      expect(() => rateLimitConfigFromEnv({ RATE_LIMIT_KEY_PREFIX: bad })).toThrow("RATE_LIMIT_KEY_PREFIX");
  });
});

async function exhaust(f: () => Promise<{ allowed: boolean; message?: string }>, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const d = await f();
    out.push(d.allowed ? "ok" : d.message);
  }
  return out;
}

describe("process limiters on the in-process store", () => {
  it("limits each surface with the configured values and shares the tenant bucket", async () => {
    setEnv({
      RATE_LIMIT_PER_KEY: "2",
      RATE_LIMIT_PER_USER: "2",
      RATE_LIMIT_PER_TOOL: "1",
      RATE_LIMIT_PER_IP: "1",
      RATE_LIMIT_PER_TENANT: "4",
      RATE_LIMIT_FAILED_AUTH_PER_IP: "2",
    });
    await resetRateLimitStoreForTests();
    expect(await exhaust(() => limitApiRequest({ keyId: "k1", tenantId: "t1" }), 3)).toEqual(["ok", "ok", "per-key rate limit exceeded"]);
    expect(await exhaust(() => limitAgentToolRequest({ keyId: "k2", tenantId: "t1", tool: "crm" }), 2)).toEqual(["ok", "per-tool rate limit exceeded"]);
    expect(await exhaust(() => limitDashboardRequest({ userId: "u1", tenantId: "t1" }), 2)).toEqual(["ok", "per-tenant rate limit exceeded"]);
    expect(await exhaust(() => limitDashboardRequest({ userId: "u1", tenantId: null }), 2)).toEqual(["ok", "per-user rate limit exceeded"]);
    expect(await exhaust(() => limitInboundRequest({ ip: "198.51.100.7" }), 2)).toEqual(["ok", "per-ip rate limit exceeded"]);
    // Failed authentications have buckets of their own: the receivers' spent IP is untouched here.
    expect(await exhaust(() => limitFailedAuthentication({ ip: "198.51.100.7" }), 3)).toEqual(["ok", "ok", "per-ip rate limit exceeded"]);
  });

  it("admits everything with no headers when RATE_LIMIT_DISABLED=1", async () => {
    setEnv({ RATE_LIMIT_DISABLED: "1", RATE_LIMIT_PER_KEY: "1" });
    await resetRateLimitStoreForTests();
    for (let i = 0; i < 5; i++) expect(await limitApiRequest({ keyId: "k", tenantId: "t" })).toEqual({ allowed: true, headers: {} });
  });
});

describe("process limiters with REDIS_URL", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("counts in Redis, under the rl: namespace", async () => {
    setEnv({ REDIS_URL: server.url, RATE_LIMIT_PER_KEY: "2" });
    await resetRateLimitStoreForTests();
    // The new client is still connecting: the first call waits for it rather than counting in memory.
    expect(await exhaust(() => limitApiRequest({ keyId: "k1", tenantId: "t1" }), 3)).toEqual(["ok", "ok", "per-key rate limit exceeded"]);
    const keys = (await server.command("KEYS", "*")) as string[];
    expect(keys.map((k) => k.replace(/:\d+$/, "")).sort()).toEqual(["rl:key:k1", "rl:tenant:t1"]);
    // The refusal was refunded on the tenant layer: 2 counted, not 3.
    const tenantKey = keys.find((k) => k.startsWith("rl:tenant:t1:"))!;
    expect(await server.command("GET", tenantKey)).toBe("2");
    await resetRateLimitStoreForTests();
    expect(((await server.command("KEYS", "rl:*")) as string[]).length).toBe(0);
  });

  it("deployments_sharing_one_redis_keep_apart_under_their_own_RATE_LIMIT_KEY_PREFIX", async () => {
    setEnv({ REDIS_URL: server.url, RATE_LIMIT_PER_KEY: "2", RATE_LIMIT_KEY_PREFIX: "staging" });
    await resetRateLimitStoreForTests();
    expect(await exhaust(() => limitApiRequest({ keyId: "k1", tenantId: "t1" }), 3)).toEqual(["ok", "ok", "per-key rate limit exceeded"]);
    await closeRateLimitStore(); // the next call re-reads the environment
    setEnv({ REDIS_URL: server.url, RATE_LIMIT_PER_KEY: "2", RATE_LIMIT_KEY_PREFIX: "production" });
    // The same key and tenant ids start from zero under another prefix.
    expect(await exhaust(() => limitApiRequest({ keyId: "k1", tenantId: "t1" }), 3)).toEqual(["ok", "ok", "per-key rate limit exceeded"]);
    const keys = ((await server.command("KEYS", "*")) as string[]).map((k) => k.replace(/:\d+$/, "")).sort();
    expect(keys).toEqual(["production:key:k1", "production:tenant:t1", "staging:key:k1", "staging:tenant:t1"]);
    expect(await server.command("GET", ((await server.command("KEYS", "staging:tenant:t1:*")) as string[])[0])).toBe("2");
    await resetRateLimitStoreForTests(); // clears production's counters only
    expect(((await server.command("KEYS", "*")) as string[]).map((k) => k.replace(/:\d+$/, "")).sort()).toEqual(["staging:key:k1", "staging:tenant:t1"]);
  });
});
