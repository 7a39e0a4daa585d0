// Fail-open means the store is unavailable, not that we are busy: a slow answer is waited for; a
// failed one (error, or the store's own command timeout) marks the store down, and while it is down
// this process limits in memory with the same limits (never unlimited), starting from the store's
// last count of the window, probing the store in the background and switching back when it
// answers, with memory's count of the window still counted. One warning per outage, one
// "recovered" line when it ends, flaps within the settle time belonging to the same outage.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { captureLogLines, type LogLines, releaseLogLines } from "../helpers/log-lines";
import { createMemoryStore, createSurfaceLimiters, keyPrefix, withMemoryFallback, type LimitStore } from "../../server/ratelimit";
import { createLimiterRedisClient, createRedisStore } from "../../server/ratelimit/redis-store";
import { createUpstashStore } from "../../server/ratelimit/upstash-store";
import { eventually } from "../helpers/webhook-consumer";
import { startOfNextWindow } from "../helpers/rate-limit-clock";
import { RedisServer } from "../helpers/redis-server";
import { DEFAULTS, readyClient } from "./store-fixtures";

const CONFIG = { ...DEFAULTS, perKey: 3 };
const FAST = { probeIntervalMs: 50, settleMs: 300 };
const OUTAGE = "rate limiter store unavailable; limiting in this process's memory until it recovers";
const RECOVERED = "rate limiter store recovered";

let logs: LogLines;
let savedLogLevel: string | undefined;
const stores: LimitStore[] = [];
beforeAll(() => {
  savedLogLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "info"; // the test setup silences logs; these tests read them
});
afterAll(() => {
  if (savedLogLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLogLevel;
});
beforeEach(() => {
  // Exact counts: each test runs inside one window (one crossing a boundary would see only part of
  // the previous window's count).
  startOfNextWindow();
  logs = captureLogLines();
});
afterEach(async () => {
  releaseLogLines();
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const warnings = () => logs.at("warn");
const recoveries = () => logs.withMsg(RECOVERED);

function resilient(primary: LimitStore, opts = FAST): LimitStore {
  const store = withMemoryFallback(primary, opts);
  stores.push(store);
  return store;
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await f();
  return { value, ms: performance.now() - start };
}

const outcome = (d: { allowed: boolean; message?: string; headers: Record<string, string> }) =>
  d.allowed ? `ok ${d.headers["X-RateLimit-Remaining"]}` : d.message;

describe("a Redis store that goes away", () => {
  let server: RedisServer;
  beforeEach(async () => {
    server = await RedisServer.start();
  });
  afterEach(async () => {
    await server.stop();
  });

  it("429_while_redis_is_killed_the_same_limits_hold_in_memory_then_redis_decides_again_after_a_restart", async () => {
    const client = await readyClient(server.url);
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    const checkA = () => api.check({ key: "key-a", tenant: "t" });
    expect((await checkA()).headers["X-RateLimit-Remaining"]).toBe("2"); // counted in Redis

    await server.kill();
    const during = [];
    for (let i = 0; i < 5; i++) {
      const { value, ms } = await timed(checkA);
      expect(ms).toBeLessThan(1000);
      during.push(outcome(value));
    }
    // Memory starts from Redis's count of the window (1), not from zero.
    expect(during).toEqual(["ok 1", "ok 0", "per-key rate limit exceeded", "per-key rate limit exceeded", "per-key rate limit exceeded"]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: "warn", msg: OUTAGE, store: "redis", reason: "error" });

    await server.restart(); // comes back empty
    // The probe notices; Redis decides again, with memory's 2 of the window added to its count. It
    // forgot the request it counted before the kill (no persistence): one more is admitted.
    const first = await eventually(async () => {
      const d = await checkA();
      return d.allowed ? d : null;
    });
    expect(first.headers["X-RateLimit-Remaining"]).toBe("0");
    expect([outcome(await checkA()), outcome(await checkA()), outcome(await checkA())]).toEqual([
      "per-key rate limit exceeded",
      "per-key rate limit exceeded",
      "per-key rate limit exceeded",
    ]);
    await eventually(async () => recoveries().length === 1);
    expect(recoveries()[0]).toMatchObject({ level: "info", store: "redis", flaps: 0 });
    expect(warnings()).toHaveLength(1);
  });

  it("429_with_redis_unreachable_from_the_start_the_first_requests_are_limited_in_memory", async () => {
    await server.kill();
    const client = createLimiterRedisClient(server.url);
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    const out = [];
    for (let i = 0; i < 5; i++) {
      const { value, ms } = await timed(() => api.check({ key: "key-a", tenant: "t" }));
      expect(ms).toBeLessThan(2000); // the first waits for the first connection attempt to fail
      out.push(outcome(value));
    }
    expect(out).toEqual(["ok 2", "ok 1", "ok 0", "per-key rate limit exceeded", "per-key rate limit exceeded"]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ msg: OUTAGE, store: "redis", reason: "error" });
  });

  it("200_a_process_s_first_requests_wait_for_the_first_connection_and_are_counted_in_redis", async () => {
    const client = createLimiterRedisClient(server.url); // still connecting
    expect(client.status).not.toBe("ready");
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    expect(outcome(await api.check({ key: "key-a", tenant: "t" }))).toBe("ok 2");
    const keys = (await server.command("KEYS", `${keyPrefix()}:key:key-a:*`)) as string[];
    expect(keys).toHaveLength(1);
    expect(warnings()).toHaveLength(0);
  });

  it("200_a_slow_answer_within_the_store_timeout_is_waited_for_not_admitted", async () => {
    const client = await readyClient(server.url);
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    await server.pause(300); // far over the old 50 ms fail-open timeout, under the 1 s command timeout
    const { value: decisions, ms } = await timed(() => Promise.all(Array.from({ length: 5 }, () => api.check({ key: "key-a", tenant: "t" }))));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(decisions.map(outcome).sort()).toEqual(["ok 0", "ok 1", "ok 2", "per-key rate limit exceeded", "per-key rate limit exceeded"]);
    expect(warnings()).toHaveLength(0);
  });

  it("200_a_busy_process_whose_timer_fires_late_takes_the_reply_already_in_its_socket_not_memory", async () => {
    const client = createLimiterRedisClient(server.url, { commandTimeoutMs: 200 });
    await new Promise((resolve) => client.once("ready", resolve));
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    expect(outcome(await api.check({ key: "key-a", tenant: "t" }))).toBe("ok 2"); // in Redis
    // The process is busy for 500 ms as it writes the next command, so the reply Redis sends at once
    // waits in the socket: the 200 ms timer is overdue when the process gets the CPU back.
    const socket = client.stream as unknown as { write: (...args: unknown[]) => boolean };
    const write = socket.write;
    let blocked = 0;
    socket.write = function (this: unknown, ...args: unknown[]) {
      const written = write.apply(this, args);
      if (!blocked++) for (const until = performance.now() + 500; performance.now() < until; );
      return written;
    };
    const busy = await timed(() => api.check({ key: "key-a", tenant: "t" }));
    socket.write = write;
    expect(blocked).toBeGreaterThan(0);
    expect(busy.ms).toBeGreaterThanOrEqual(500);
    expect(outcome(busy.value)).toBe("ok 1"); // Redis's second count of key-a, not memory's first
    expect(warnings()).toHaveLength(0);
    expect(outcome(await api.check({ key: "key-a", tenant: "t" }))).toBe("ok 0");
  });

  it("429_a_hung_redis_fails_calls_after_the_command_timeout_and_memory_decides_until_it_answers_again", async () => {
    const client = createLimiterRedisClient(server.url, { commandTimeoutMs: 300 });
    await new Promise((resolve) => client.once("ready", resolve));
    const { api } = createSurfaceLimiters(resilient(createRedisStore(client, { ownsClient: true })), CONFIG);
    expect(outcome(await api.check({ key: "key-a", tenant: "t" }))).toBe("ok 2"); // in Redis
    await server.pause(1500);
    const hung = await timed(() => api.check({ key: "key-a", tenant: "t" }));
    expect(hung.ms).toBeGreaterThanOrEqual(250);
    expect(hung.ms).toBeLessThan(1000);
    expect(outcome(hung.value)).toBe("ok 1"); // memory's first count of key-a, after Redis's 1
    const next = await timed(() => api.check({ key: "key-a", tenant: "t" }));
    expect(next.ms).toBeLessThan(250); // down: no more waiting on Redis (its 300 ms timeout); slack for a loaded machine
    expect(outcome(next.value)).toBe("ok 0");
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ msg: OUTAGE, store: "redis", reason: "timeout" });
    // After the pause Redis decides again: its 1 of key-a (the timed-out call it ran late was given
    // back) and memory's 2 fill the window.
    await eventually(async () => recoveries().length === 1, 10_000);
    expect(outcome(await api.check({ key: "key-a", tenant: "t" }))).toBe("per-key rate limit exceeded");
    const keys = (await server.command("KEYS", `${keyPrefix()}:key:key-a:*`)) as string[];
    await eventually(async () => (await server.command("GET", keys[0]!)) === "1");
  });
});

describe("outage logging", () => {
  /** A memory store standing in for Redis, whose calls fail while `failing.now` is set. */
  function flakyStore() {
    const inner = createMemoryStore();
    const state = { failing: false, calls: 0 };
    const store: LimitStore = {
      ...inner,
      kind: "redis",
      limit: async (id, limit, windowMs, rate) => {
        if (state.failing) throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
        state.calls++;
        return inner.limit(id, limit, windowMs, rate);
      },
      probe: async () => {
        if (state.failing) throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
      },
    };
    return { store, state };
  }

  /** Calls until one reaches the primary store again (the probe has switched back). */
  async function untilPrimaryDecides(api: ReturnType<typeof createSurfaceLimiters>["api"], state: { calls: number }) {
    await eventually(async () => {
      const before = state.calls;
      await api.check({ key: "k", tenant: "t" });
      return state.calls > before;
    });
  }

  it("logs_one_warning_per_outage_and_one_recovered_line_when_it_ends_flaps_within_the_settle_time_included", async () => {
    const { store, state } = flakyStore();
    const { api } = createSurfaceLimiters(resilient(store), CONFIG);

    // Outage 1, flapping: down, up briefly, down again, then up for good.
    state.failing = true;
    for (let i = 0; i < 20; i++) await api.check({ key: "k", tenant: "t" });
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ msg: OUTAGE, store: "redis", reason: "error", error: { message: "connect ECONNREFUSED 127.0.0.1:6379" } });
    state.failing = false;
    await untilPrimaryDecides(api, state);
    state.failing = true; // within the 300 ms settle time: the same outage
    await api.check({ key: "k", tenant: "t" });
    expect(warnings()).toHaveLength(1);
    expect(recoveries()).toHaveLength(0);
    state.failing = false;
    await untilPrimaryDecides(api, state);
    await eventually(async () => recoveries().length === 1);
    expect(recoveries()[0]).toMatchObject({ level: "info", msg: RECOVERED, store: "redis", flaps: 1 });

    // Outage 2, right after: logged again (nothing throttles across outages), and its recovery too.
    state.failing = true;
    await api.check({ key: "k", tenant: "t" });
    expect(warnings()).toHaveLength(2);
    state.failing = false;
    await untilPrimaryDecides(api, state);
    await eventually(async () => recoveries().length === 2);
    expect(recoveries()[1]).toMatchObject({ msg: RECOVERED, flaps: 0 });
    expect(warnings()).toHaveLength(2);
  });

  it("a_failed_layer_is_decided_in_memory_so_its_refusal_still_counts", async () => {
    const { store, state } = flakyStore();
    const { api } = createSurfaceLimiters(resilient(store), CONFIG);
    expect(outcome(await api.check({ key: "k", tenant: "t" }))).toBe("ok 2");
    state.failing = true;
    const out = [];
    for (let i = 0; i < 4; i++) out.push(outcome(await api.check({ key: "k", tenant: "t" })));
    expect(out).toEqual(["ok 1", "ok 0", "per-key rate limit exceeded", "per-key rate limit exceeded"]);
  });
});

describe("an Upstash REST store that fails", () => {
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

  it("429_a_hanging_endpoint_fails_the_call_after_its_request_timeout_and_memory_limits", async () => {
    const { api } = createSurfaceLimiters(resilient(createUpstashStore({ url, token: "test", requestTimeoutMs: 300 })), CONFIG);
    const first = await timed(() => api.check({ key: "k", tenant: "t" }));
    expect(first.ms).toBeLessThan(1500);
    const out = [outcome(first.value)];
    for (let i = 0; i < 3; i++) out.push(outcome(await api.check({ key: "k", tenant: "t" })));
    expect(out).toEqual(["ok 2", "ok 1", "ok 0", "per-key rate limit exceeded"]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ msg: OUTAGE, store: "upstash", reason: "timeout" });
  });

  it("429_a_refused_connection_marks_the_store_down_and_memory_limits", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { api } = createSurfaceLimiters(resilient(createUpstashStore({ url: `http://127.0.0.1:${port}`, token: "test" })), CONFIG);
    const out = [];
    for (let i = 0; i < 4; i++) out.push(outcome(await api.check({ key: "k", tenant: "t" })));
    expect(out).toEqual(["ok 2", "ok 1", "ok 0", "per-key rate limit exceeded"]);
    expect(warnings()[0]).toMatchObject({ msg: OUTAGE, store: "upstash", reason: "error" });
  });
});
