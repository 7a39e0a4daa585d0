// PostgreSQL stopped for 20 s under a running lean front: every request answers 503 with
// Retry-After (the envelope, code internal_error) within 5 s, none a 500; within 5 s of the
// server's return requests succeed again, without a restart and without stale errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { DATABASE_UNAVAILABLE_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { onDatabase, PostgresServer } from "../helpers/postgres-server";
import { answerOf, SIGN_IN_ENV, signInOverHttp } from "../dashboard/http-session";

requireNextBuild();

const OUTAGE_MS = 20_000;
const UNAVAILABLE = { error: { code: "internal_error", message: DATABASE_UNAVAILABLE_MESSAGE } };

type Probe = { at: number; ms: number; surface: string; status: number; retryAfter: string | null; body: unknown };

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL outage under the lean front (needs `next build`)", () => {
  let cluster: PostgresServer;
  let server: Running;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    cluster = await PostgresServer.start();
    let email = "";
    ({ key } = await onDatabase(cluster.url, async () => {
      const made = await tenantWithKey();
      email = await userInTenant(made.tenantId, "owner");
      return made;
    }));
    server = await startMount("lean", { DATABASE_URL: cluster.url, ...SIGN_IN_ENV });
    cookie = await signInOverHttp(server.url, email);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  /** One request per surface: an API read, an API write, a dashboard query. */
  async function probeAll(): Promise<Probe[]> {
    const auth = { authorization: `Bearer ${key}` };
    const requests: [string, () => Promise<Response>][] = [
      ["GET /api/v1/offerings", () => fetch(`${server.url}/api/v1/offerings?limit=1`, { headers: auth })],
      [
        "POST /api/v1/offerings",
        () =>
          fetch(`${server.url}/api/v1/offerings`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: JSON.stringify({ title: "Outage", price: "1.00", price_currency: "USD" }),
          }),
      ],
      [
        "tRPC offerings.list",
        () =>
          fetch(`${server.url}/api/trpc/offerings.list?input=${encodeURIComponent(JSON.stringify({ limit: 1 }))}`, {
            headers: { cookie, origin: server.url },
          }),
      ],
    ];
    return Promise.all(
      requests.map(async ([surface, send]) => {
        const at = Date.now();
        const res = await send();
        const { body } = await answerOf(res);
        return { at, ms: Date.now() - at, surface, status: res.status, retryAfter: res.headers.get("retry-after"), body };
      }),
    );
  }

  it("503_with_retry_after_within_5s_each_while_down_then_2xx_within_5s_of_its_return", async () => {
    expect((await probeAll()).map((p) => p.status)).toEqual([200, 201, 200]);

    await cluster.halt("fast");
    const downUntil = Date.now() + OUTAGE_MS;
    const during: Probe[] = [];
    while (Date.now() < downUntil) {
      during.push(...(await probeAll()));
      await new Promise((r) => setTimeout(r, 200));
    }
    await cluster.resume();
    const upAt = Date.now();
    const after: Probe[] = [];
    while (Date.now() < upAt + 8_000) {
      after.push(...(await probeAll()));
      await new Promise((r) => setTimeout(r, 100));
    }

    // While down: every answer a 503 with Retry-After, quickly, on every surface (the dashboard's tRPC too).
    expect(during.length).toBeGreaterThan(30);
    expect(during.filter((p) => p.status !== 503)).toEqual([]);
    expect(during.filter((p) => p.ms >= 5_000)).toEqual([]);
    expect(new Set(during.map((p) => p.retryAfter))).toEqual(new Set(["2"]));
    const api = during.filter((p) => !p.surface.startsWith("tRPC"));
    expect(api.every((p) => JSON.stringify(p.body) === JSON.stringify(UNAVAILABLE))).toBe(true);
    const dashboard = during.filter((p) => p.surface.startsWith("tRPC"));
    expect(dashboard.every((p) => (p.body as any).error.message === DATABASE_UNAVAILABLE_MESSAGE)).toBe(true);
    expect(dashboard.every((p) => (p.body as any).error.data.appCode === "internal_error")).toBe(true);
    // The outage is logged as a warning (by the breaker); no request logs an "unhandled" error with a stack.
    expect(server.output()).not.toMatch(/unhandled error|trpc error/);

    // Back: no 500 at any time, and from 5 s after the return every request succeeds.
    expect(after.filter((p) => p.status >= 500 && p.status !== 503)).toEqual([]);
    const settled = after.filter((p) => p.at >= upAt + 5_000);
    expect(settled.length).toBeGreaterThan(6);
    expect(settled.filter((p) => p.status >= 300)).toEqual([]);
  }, 120_000);
});
