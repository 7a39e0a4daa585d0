// The rate-limit store (Redis) is reported by /readyz but never fails it: limits fail open to each
// process's memory. While Redis is down, API requests are still answered, /readyz says 200 with the
// store `down`, and the metrics show the store down and its errors; once Redis is back, `ok` again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { RedisServer } from "../helpers/redis-server";

const checks = (store: string) => ({ shutdown: "ok", database: "ok", migrations: "ok", webhook_engine: "ok", rate_limit_store: store });

describe("/readyz through a Redis outage", () => {
  let redis: RedisServer;
  let server: Running;
  let metricsUrl: string;
  let key: string;

  beforeAll(async () => {
    ({ key } = await tenantWithKey());
    redis = await RedisServer.start();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startMount("lean", { REDIS_URL: redis.url, UPSTASH_REDIS_REST_URL: undefined, METRICS_PORT: String(metricsPort) });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  const readyz = async () => {
    const res = await fetch(`${server.url}/readyz`);
    return { status: res.status, body: await res.json() };
  };
  const storeLines = async () =>
    (await (await fetch(metricsUrl)).text())
      .split("\n")
      .filter((l) => l.startsWith("tdp_ratelimit_store_"))
      .map((l) => l.replace(/ \d+$/, (v) => (l.startsWith("tdp_ratelimit_store_errors_total") ? " N" : v)));

  it("200_with_the_store_down_while_redis_is_away_and_ok_once_it_is_back", async () => {
    expect(await readyz()).toEqual({ status: 200, body: { status: "ready", failing: [], checks: checks("ok") } });
    expect(await storeLines()).toEqual(['tdp_ratelimit_store_up{store="redis"} 1']);

    await redis.kill();
    const list = await fetch(`${server.url}/api/v1/offerings?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200); // counted in memory meanwhile
    expect(await readyz()).toEqual({ status: 200, body: { status: "ready", failing: [], checks: checks("down") } });
    expect(await storeLines()).toEqual(['tdp_ratelimit_store_errors_total{store="redis",reason="error"} N', 'tdp_ratelimit_store_up{store="redis"} 0']);

    await redis.restart();
    let back = await readyz();
    for (const until = Date.now() + 10_000; back.body.checks.rate_limit_store !== "ok" && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 200));
      back = await readyz();
    }
    expect(back).toEqual({ status: 200, body: { status: "ready", failing: [], checks: checks("ok") } });
    expect((await storeLines()).at(-1)).toBe('tdp_ratelimit_store_up{store="redis"} 1');
  }, 60_000);
});
