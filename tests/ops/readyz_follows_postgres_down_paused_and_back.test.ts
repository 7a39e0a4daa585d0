// /readyz under a running lean front while its PostgreSQL is stopped, then paused: 503 naming the
// database (unreachable, or no answer within READINESS_TIMEOUT_MS) within seconds, /healthz 200
// throughout, the readiness gauges at 0; and 200 again once PostgreSQL is back, without a restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Running } from "../../scripts/bench/services";
import { startMount } from "../helpers/http-mounts";
import { PostgresServer } from "../helpers/postgres-server";

const CHECKS_OK = { shutdown: "ok", database: "ok", migrations: "ok", webhook_engine: "ok", rate_limit_store: "memory" };
const READY = { status: "ready", failing: [], checks: CHECKS_OK };
const databaseFailing = (why: string) => ({
  status: "not_ready",
  failing: ["database"],
  checks: { ...CHECKS_OK, database: why, migrations: "unknown" },
});

type Probe = { at: number; ms: number; status: number; body: unknown; headers: Record<string, string | null> };

describe.skipIf(!process.env.DATABASE_URL)("/readyz through a PostgreSQL outage", () => {
  let cluster: PostgresServer;
  let server: Running;
  let metricsUrl: string;

  beforeAll(async () => {
    cluster = await PostgresServer.start();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startMount("lean", {
      DATABASE_URL: cluster.url,
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      READINESS_TIMEOUT_MS: "1000",
      METRICS_PORT: String(metricsPort),
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  async function probe(path: "/readyz" | "/healthz"): Promise<Probe> {
    const at = Date.now();
    const res = await fetch(server.url + path);
    const body = await res.json();
    return {
      at,
      ms: Date.now() - at,
      status: res.status,
      body,
      headers: { "content-type": res.headers.get("content-type"), "cache-control": res.headers.get("cache-control") },
    };
  }

  /** Probes /readyz every 100 ms for `ms`. */
  async function probesFor(ms: number): Promise<Probe[]> {
    const out: Probe[] = [];
    for (const until = Date.now() + ms; Date.now() < until; ) {
      out.push(await probe("/readyz"));
      await new Promise((r) => setTimeout(r, 100));
    }
    return out;
  }

  const readinessGauges = async () =>
    (await (await fetch(metricsUrl)).text())
      .split("\n")
      .filter((line) => line.startsWith("tdp_ready ") || line.startsWith("tdp_readiness_check_ok{"))
      .sort();

  async function untilReady(timeoutMs: number): Promise<Probe[]> {
    const out: Probe[] = [];
    for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
      const p = await probe("/readyz");
      out.push(p);
      if (p.status === 200) return out;
      await new Promise((r) => setTimeout(r, 100));
    }
    return out;
  }

  it("503_naming_the_database_while_postgres_is_stopped_healthz_200_then_200_again_once_it_is_back", async () => {
    const pid = server.proc.pid;
    const ready = await probe("/readyz");
    expect(ready).toMatchObject({ status: 200, body: READY, headers: { "content-type": "application/json", "cache-control": "no-store" } });
    expect(await readinessGauges()).toContain("tdp_ready 1");

    await cluster.halt("fast");
    const haltedAt = Date.now();
    const during = await probesFor(6_000);
    // Within 2 s of the stop every answer is the 503 naming the database, each within the readiness timeout.
    const settled = during.filter((p) => p.at >= haltedAt + 2_000);
    expect(settled.length).toBeGreaterThan(10);
    expect(settled.map((p) => [p.status, p.body])).toEqual(settled.map(() => [503, databaseFailing("unreachable")]));
    expect(during.filter((p) => p.status !== 503)).toEqual([]);
    expect(Math.max(...during.map((p) => p.ms))).toBeLessThan(2_000);
    expect(await probe("/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await readinessGauges()).toEqual([
      'tdp_readiness_check_ok{check="database"} 0',
      'tdp_readiness_check_ok{check="migrations"} 1',
      'tdp_readiness_check_ok{check="rate_limit_store"} 1',
      'tdp_readiness_check_ok{check="shutdown"} 1',
      'tdp_readiness_check_ok{check="webhook_engine"} 1',
      "tdp_ready 0",
    ]);

    await cluster.resume();
    const back = await untilReady(5_000);
    expect(back.at(-1)).toMatchObject({ status: 200, body: READY });
    // The same process all along: no restart brought it back.
    expect(server.proc.pid).toBe(pid);
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);

  it("503_database_timeout_within_the_readiness_timeout_while_postgres_is_paused_then_200", async () => {
    expect((await untilReady(5_000)).at(-1)?.status).toBe(200);
    cluster.signalAll("SIGSTOP");
    try {
      const paused = await probe("/readyz");
      expect(paused).toMatchObject({ status: 503, body: databaseFailing("timeout") });
      // READINESS_TIMEOUT_MS=1000: the load balancer is not kept waiting on a frozen database.
      expect(paused.ms).toBeGreaterThanOrEqual(900);
      expect(paused.ms).toBeLessThan(2_000);
    } finally {
      cluster.signalAll("SIGCONT");
    }
    const back = await untilReady(15_000);
    expect(back.at(-1)).toMatchObject({ status: 200, body: READY });
  }, 60_000);
});
