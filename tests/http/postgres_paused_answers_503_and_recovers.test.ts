// PostgreSQL paused (SIGSTOP on the server and every backend: connections stay open, nothing
// answers) under a running lean front: every request answers 503 with Retry-After within the query
// timeout plus a margin, none hangs and none is a 500; after SIGCONT requests succeed again within
// 5 s, without a restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { DATABASE_UNAVAILABLE_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { onDatabase, PostgresServer } from "../helpers/postgres-server";

requireNextBuild();

const PAUSE_MS = 10_000;
const QUERY_TIMEOUT_MS = 1_500;
const UNAVAILABLE = { error: { code: "internal_error", message: DATABASE_UNAVAILABLE_MESSAGE } };

type Probe = { at: number; ms: number; surface: string; status: number; retryAfter: string | null; body: unknown };

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL paused under the lean front (needs `next build`)", () => {
  let cluster: PostgresServer;
  let server: Running;
  let key: string;

  beforeAll(async () => {
    cluster = await PostgresServer.start();
    ({ key } = await onDatabase(cluster.url, () => tenantWithKey()));
    server = await startMount("lean", {
      DATABASE_URL: cluster.url,
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      DATABASE_CONNECT_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    });
  }, 180_000);

  afterAll(async () => {
    cluster?.signalAll("SIGCONT");
    await server?.stop();
    await cluster?.destroy();
  });

  /** An API read (prepared statements) and an API write (Prisma, a transaction). */
  async function probeAll(): Promise<Probe[]> {
    const auth = { authorization: `Bearer ${key}` };
    const requests: [string, () => Promise<Response>][] = [
      ["GET /api/v1/offerings", () => fetch(`${server.url}/api/v1/offerings?limit=1`, { headers: auth, signal: AbortSignal.timeout(30_000) })],
      [
        "POST /api/v1/offerings",
        () =>
          fetch(`${server.url}/api/v1/offerings`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: JSON.stringify({ title: "Paused", price: "1.00", price_currency: "USD" }),
            signal: AbortSignal.timeout(30_000),
          }),
      ],
    ];
    return Promise.all(
      requests.map(async ([surface, send]) => {
        const at = Date.now();
        const res = await send();
        return { at, ms: Date.now() - at, surface, status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
      }),
    );
  }

  it("503_with_retry_after_within_the_query_timeout_while_paused_then_2xx_within_5s_of_sigcont", async () => {
    expect((await probeAll()).map((p) => p.status)).toEqual([200, 201]);

    cluster.signalAll("SIGSTOP");
    const pausedUntil = Date.now() + PAUSE_MS;
    const during: Probe[] = [];
    while (Date.now() < pausedUntil) {
      during.push(...(await probeAll()));
      await new Promise((r) => setTimeout(r, 200));
    }
    cluster.signalAll("SIGCONT");
    const upAt = Date.now();
    const after: Probe[] = [];
    while (Date.now() < upAt + 8_000) {
      after.push(...(await probeAll()));
      await new Promise((r) => setTimeout(r, 100));
    }

    expect(during.length).toBeGreaterThan(6);
    expect(during.filter((p) => p.status !== 503)).toEqual([]);
    expect(during.filter((p) => p.ms >= QUERY_TIMEOUT_MS + 2_000)).toEqual([]);
    expect(new Set(during.map((p) => p.retryAfter))).toEqual(new Set(["2"]));
    expect(during.every((p) => JSON.stringify(p.body) === JSON.stringify(UNAVAILABLE))).toBe(true);
    // The outage is logged once, as a warning; no request logs an "unhandled" error with a stack.
    expect(server.output().match(/database unreachable/g)?.length).toBe(1);
    expect(server.output()).not.toMatch(/unhandled error|trpc error/);

    expect(after.filter((p) => p.status >= 500 && p.status !== 503)).toEqual([]);
    const settled = after.filter((p) => p.at >= upAt + 5_000);
    expect(settled.length).toBeGreaterThan(4);
    expect(settled.filter((p) => p.status >= 300)).toEqual([]);
  }, 120_000);
});
