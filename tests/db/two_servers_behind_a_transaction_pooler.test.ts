// Scale-out behind a connection pooler: two lean fronts (`npm start`'s server) share one database
// through one PgBouncer in transaction mode, where a server connection belongs to a client for one
// transaction only (no named prepared statements, LISTEN or session locks survive between them).
// Session work (LISTEN, migrations) goes to DIRECT_DATABASE_URL. Under 40 concurrent clients
// writing and reading for several seconds: no 5xx, every webhook event reaches a real local
// consumer exactly once, a burst afterwards is answered at once (nothing wedged), and an event
// another process writes wakes the servers' workers through LISTEN on the direct connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { closeDb } from "../../server/db/client";
import { call, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { hasPgbouncer, type Pgbouncer, startPgbouncer } from "../helpers/pgbouncer";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const CLIENTS = 40;
const LOAD_MS = 6_000;
/** The direct URL of this file's database (under TEST_POOLER the suite's DATABASE_URL is itself a pooler). */
const direct = () => process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL!;

describe.skipIf(!process.env.DATABASE_URL || !hasPgbouncer())("two servers behind PgBouncer in transaction mode", () => {
  let bouncer: Pgbouncer;
  let consumer: Consumer;
  const servers: Running[] = [];
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    consumer = await startConsumer(200);
    ({ key, tenantId } = await tenantWithKey());
    await dashboardCaller(tenantId).webhooks.createSubscription({
      url: consumer.url("/hook"),
      events: ["offering.created", "offering.updated"],
      max_deliveries_per_second: 1000,
    });
    await closeDb();
    // A pool smaller than the two servers' connections together (2 × 15): clients queue in PgBouncer, as in production.
    bouncer = await startPgbouncer(direct(), { poolSize: 12 });
    const env = {
      DATABASE_URL: bouncer.url(direct()),
      DIRECT_DATABASE_URL: direct(),
      RATE_LIMIT_DISABLED: "1",
      // Only a wake-up delivers within the test: its own writes wake a server's worker in process,
      // another process's only through LISTEN (on the direct URL: a pooler would lose it).
      WEBHOOK_POLL_INTERVAL_MS: "60000",
      REDIS_URL: undefined,
      LOG_LEVEL: "warn",
    };
    servers.push(...(await Promise.all([startMount("lean", env), startMount("lean", env)])));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await bouncer?.stop();
    await consumer?.close();
  });

  /** One client's request: status and (for a 5xx) the body, to name the failure. */
  async function send(server: Running, method: string, path: string, body?: unknown) {
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text, json: () => JSON.parse(text) };
  }

  it("no_5xx_under_40_concurrent_writers_and_each_event_delivered_exactly_once", async () => {
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let created = 0;
    let updated = 0;
    const note = (what: string, r: { status: number; body: string }) => {
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500 && failures.length < 5) failures.push(`${what} ${r.status} ${r.body.slice(0, 200)}`);
    };
    /** One client's round: create, list, read it back (on the other server), and every third round an update. */
    async function round(i: number, n: number) {
      const server = servers[i % servers.length]!;
      const made = await send(server, "POST", "/offerings", { title: `Pooled ${i}-${n}`, price: "10.00", price_currency: "USD" });
      note("POST /offerings", made);
      if (made.status !== 201) return;
      created++;
      const id = made.json().id as string;
      note("GET /offerings", await send(server, "GET", "/offerings?limit=5"));
      note("GET /offerings/{id}", await send(servers[(i + 1) % servers.length]!, "GET", `/offerings/${id}`));
      if (n % 3 === 0) {
        const changed = await send(server, "PATCH", `/offerings/${id}`, { price: "12.00" });
        note("PATCH /offerings/{id}", changed);
        if (changed.status === 200) updated++;
      }
    }
    // Warm: each server's first requests load their route handlers, which is no part of the load.
    await Promise.all(servers.map((_, i) => round(i, 0)));
    const until = Date.now() + LOAD_MS;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        for (let n = 1; Date.now() < until; n++) await round(i, n);
      }),
    );
    expect(failures).toEqual([]);
    expect(Object.fromEntries([...statuses].filter(([status]) => status >= 300))).toEqual({});
    expect(created).toBeGreaterThanOrEqual(CLIENTS); // every client wrote

    // Every event reaches the consumer, from either server's worker, exactly once.
    const events = created + updated;
    await consumer.waitFor(events, 60_000);
    const deliveries = await eventually(async () => {
      const all = await deliveriesOf(tenantId);
      return all.every((d) => d.status === "delivered") && all;
    }, 10_000);
    expect(deliveries).toHaveLength(events);
    expect(deliveries.filter((d) => d.attempts.length !== 1)).toEqual([]);

    // Not wedged: a burst of 40 concurrent reads across both servers, each answered 200 promptly.
    const startedAt = Date.now();
    const burst = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => send(servers[i % servers.length]!, "GET", "/offerings?limit=20")));
    expect(burst.map((r) => r.status)).toEqual(Array(CLIENTS).fill(200));
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    // An event another process writes (this test's, in process) wakes the servers through LISTEN.
    const before = consumer.received.length;
    const made = await call("POST", "/offerings", { key, body: { title: "From elsewhere", price: "1.00", price_currency: "USD" } });
    expect(made.status).toBe(201);
    await consumer.waitFor(before + 1, 10_000);
    expect(consumer.received.at(-1)!.body.data.object.id).toBe(made.body.id);
    // Every send claimed with the load's events has arrived by now (a later event has been claimed,
    // sent and answered since): each event arrived exactly once.
    const perEvent = new Map<string, number>();
    for (const r of consumer.received) perEvent.set(r.body.id, (perEvent.get(r.body.id) ?? 0) + 1);
    expect(consumer.received).toHaveLength(events + 1);
    expect([...perEvent.values()].filter((n) => n !== 1)).toEqual([]);

    // Neither server logged an error (a failed claim, a lost LISTEN, an unhandled error).
    for (const s of servers) expect(s.output()).not.toMatch(/"level":"error"|unhandled/);
  }, 180_000);
});
