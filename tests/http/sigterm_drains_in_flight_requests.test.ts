// SIGTERM to the lean front under load: every request already being served gets its real answer
// (no reset, no 500), idle keep-alive connections are closed cleanly, new connections are refused,
// and the process then exits 0 having released the database.
import { afterEach, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { call, tenantWithKey } from "../helpers/api";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { exitOf, idleKeepAliveConnections, roundTrip, splitBodyRequest, waitUntilRefused } from "../helpers/http-client";
import { onDatabase, PostgresServer } from "../helpers/postgres-server";
import pg from "pg";

requireNextBuild();

let server: Running | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const IN_FLIGHT = 24;
const portOf = (url: string) => Number(new URL(url).port);
const offering = (i: number) => JSON.stringify({ title: `In flight ${i}`, price: "1.00", price_currency: "USD" });

describe("SIGTERM drains the lean front (needs `next build`)", () => {
  it("sigterm_answers_each_in_flight_request_201_closes_idle_keepalive_connections_and_exits_0", async () => {
    const { key } = await tenantWithKey();
    const auth = { authorization: `Bearer ${key}` };
    server = await startMount("lean", { SHUTDOWN_TIMEOUT_MS: "20000" });
    const idle = await idleKeepAliveConnections(`${server.url}/api/v1/offerings?limit=1`, 8, auth);
    expect(idle.statuses).toEqual(Array(8).fill(200));
    expect(idle.connections).toBe(8);

    // 24 creates in flight: headers and half of each body are at the server, the rest comes later.
    const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) =>
      splitBodyRequest(`${server!.url}/api/v1/offerings`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: offering(i) }),
    );
    await Promise.all(inFlight.map((r) => r.sent));
    // A round trip on a connection made after theirs: answered, the server has read what they sent.
    expect(await roundTrip(`${server.url}/api/v1/offerings?limit=1`, auth)).toBe(200);

    const exited = exitOf(server.proc, 30_000);
    server.proc.kill("SIGTERM");
    await waitUntilRefused(portOf(server.url)); // no new connections…
    expect(await idle.endings).toEqual(Array(8).fill("closed")); // …idle ones closed cleanly

    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map((r) => r.answer));
    expect(answers.map((a) => a.status)).toEqual(Array(IN_FLIGHT).fill(201));
    expect(answers.map((a) => JSON.parse(a.body).title)).toEqual(Array.from({ length: IN_FLIGHT }, (_, i) => `In flight ${i}`));
    expect(answers.every((a) => a.headers.connection === "close")).toBe(true);

    expect(await exited).toMatchObject({ code: 0, signal: null });
    idle.destroy();
    // The database was released (PGlite: its lock) and every create is there.
    const listed = await call("GET", "/offerings?limit=100", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(IN_FLIGHT);
  }, 120_000);

  describe.skipIf(!process.env.DATABASE_URL)("on PostgreSQL", () => {
    let cluster: PostgresServer | undefined;
    afterEach(async () => {
      await server?.stop();
      server = undefined;
      await cluster?.destroy();
      cluster = undefined;
    });

    it("sigterm_waits_for_requests_blocked_in_the_database_and_answers_each_201", async () => {
      // A cluster of this test's own: it holds a table lock every create waits on.
      cluster = await PostgresServer.start();
      const { key } = await onDatabase(cluster.url, () => tenantWithKey());
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      server = await startMount("lean", { DATABASE_URL: cluster.url, DATABASE_POOL_SIZE: "40", SHUTDOWN_TIMEOUT_MS: "20000" });

      const lock = new pg.Client({ connectionString: cluster.url });
      lock.on("error", () => {}); // the cluster is destroyed after the test
      await lock.connect();
      await lock.query("BEGIN");
      await lock.query("LOCK TABLE offerings IN SHARE ROW EXCLUSIVE MODE"); // reads go on, inserts wait
      const requests = Array.from({ length: IN_FLIGHT }, (_, i) => {
        const request = splitBodyRequest(`${server!.url}/api/v1/offerings`, { method: "POST", headers: auth, body: offering(i) });
        request.finish();
        return request.answer;
      });
      // Wait until every one of them is inside the database, waiting on the lock (asked on other
      // connections: inside the lock's transaction pg_stat_activity would stay one snapshot).
      const lockWaiters = async () =>
        (await cluster!.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`))[0].n;
      while ((await lockWaiters()) < IN_FLIGHT) await new Promise((r) => setTimeout(r, 25));

      const exited = exitOf(server.proc, 30_000);
      server.proc.kill("SIGTERM");
      await waitUntilRefused(portOf(server.url));
      await lock.query("COMMIT");
      await lock.end();

      const answers = await Promise.all(requests);
      expect(answers.map((a) => a.status)).toEqual(Array(IN_FLIGHT).fill(201));
      expect(answers.map((a) => JSON.parse(a.body).title)).toEqual(Array.from({ length: IN_FLIGHT }, (_, i) => `In flight ${i}`));
      expect(answers.every((a) => a.headers.connection === "close")).toBe(true);
      expect(await exited).toMatchObject({ code: 0, signal: null });
      expect(await cluster.query<{ n: number }>("SELECT count(*)::int AS n FROM offerings")).toEqual([{ n: IN_FLIGHT }]);
    }, 120_000);
  });
});
