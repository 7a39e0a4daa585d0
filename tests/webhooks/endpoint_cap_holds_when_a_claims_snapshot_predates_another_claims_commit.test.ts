// The per-endpoint cap across processes claiming at the same moment. Under READ COMMITTED a claim
// whose snapshot was taken before another process's claim on the same subscription committed can
// still lock that subscription's row once the other commits (PostgreSQL locks the newest version and
// re-checks it), while it counts the endpoint's leases as of its snapshot, without the other claim's.
// Such a claim must leave the endpoint alone (and its worker claim again at once, with a fresh
// snapshot), or the two claims together hold more than the cap.
//
// Made deterministic on a real PostgreSQL: the late claim runs the real statement on a connection
// whose search_path finds a clock_timestamp() of the test's first (pg_catalog after it), which waits
// for an advisory lock the test holds. The claim calls clock_timestamp() for each subscription's
// first send slot, after its snapshot and before its row lock, so it stops there while the other
// claim runs and commits. The two claims see different due deliveries, as they do when two events'
// transactions commit out of creation order: the late claim's snapshot has only the newer one.
// PostgreSQL only: the interleaving needs connections of its own, which the embedded PGlite has not
// (a single connection never runs two claims at once).
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { databaseKind, directDatabaseUrl } from "../../server/db/location";
import { pacedClaimSql } from "../../server/webhooks/claim-deliveries";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import type { SqlRunner } from "../../server/db/database";
import { tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller } from "../helpers/webhooks";
import { openDatabase } from "../../server/db/database";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const onPostgres = databaseKind() === "postgres";
const CLAIM = pacedClaimSql("d.inngest_run_id IS NULL");
const PAUSE_KEY = 4_270_027;

type ClaimRow = { delivery_id: string | null; changed_skipped: number };
/**
 * The claim's parameters: capacity, lease ms, own ids, horizon ms, per endpoint, per tenant, probe
 * interval ms, own successes. The horizon is wide: the paused claim's send slots come after the other
 * claim's, and the pause itself (milliseconds to a few hundred on a loaded machine) must not push
 * them past it (between two processes the window is a claim's duration, well inside 250 ms).
 */
const claimArgs = (capacity: number, perEndpoint: number) => [capacity, 30_000, "", 10_000, perEndpoint, 24, 30_000, ""];

let clients: pg.Client[] = [];
let consumers: Consumer[] = [];
async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: directDatabaseUrl() });
  await client.connect();
  clients.push(client);
  return client;
}
// Connections first: the gate's lock goes with its session, so a claim stopped at it ends and the worker can stop.
async function cleanUp() {
  for (const c of clients) await c.end().catch(() => {});
  clients = [];
  await stopEmbeddedWorker();
  for (const c of consumers) await c.close();
  consumers = [];
  // The file's own database: no test meets another's deliveries (a claim takes the most urgent endpoint first).
  const c = await connect();
  await c.query("DELETE FROM webhook_deliveries");
  await c.end();
  clients = [];
  delete process.env.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT;
  delete process.env.WEBHOOK_POLL_INTERVAL_MS;
}
afterEach(cleanUp);
afterAll(cleanUp);

/** The pause: while `gate` holds PAUSE_KEY, a claim on a paused connection stops after its snapshot, before its row locks. */
async function pauseGate() {
  const gate = await connect();
  await gate.query(`CREATE SCHEMA IF NOT EXISTS claim_pause`);
  await gate.query(`CREATE OR REPLACE FUNCTION claim_pause.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
    BEGIN PERFORM pg_advisory_xact_lock_shared(${PAUSE_KEY}); RETURN pg_catalog.clock_timestamp(); END $$`);
  await gate.query(`SELECT pg_advisory_lock(${PAUSE_KEY})`);
  return {
    /** A connection whose claims stop at the gate while it is closed. */
    async pausedConnection() {
      const c = await connect();
      await c.query("SET search_path = claim_pause, pg_catalog, public");
      const { rows } = await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      return { client: c, pid: rows[0]!.pid };
    },
    /** Resolves once the backend `pid` waits at the gate. */
    async reached(pid: number) {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
        const { rows } = await gate.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = $1 AND NOT granted`, [pid]);
        if (rows.length) return;
      }
      throw new Error("the claim never reached the gate");
    },
    open: () => gate.query(`SELECT pg_advisory_unlock(${PAUSE_KEY})`),
  };
}

async function endpoint(url: string) {
  const { tenantId } = await tenantWithKey();
  const sub = await dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["csat.received"], max_deliveries_per_second: 1000 });
  return { tenantId, subscriptionId: sub.id };
}

/** One due delivery (and its event), written on `c`: committed at once unless `c` is inside a transaction. */
async function writeDelivery(c: pg.Client, tenantId: string, subscriptionId: string): Promise<string> {
  const { rows } = await c.query<{ id: string }>(
    `WITH e AS (INSERT INTO events (id, tenant_id, type, data) VALUES (gen_random_uuid(), $1, 'csat.received', '{}'::jsonb) RETURNING id)
     INSERT INTO webhook_deliveries (id, tenant_id, subscription_id, event_id, next_attempt_at)
     SELECT gen_random_uuid(), $1, $2, e.id, now() - interval '1 second' FROM e RETURNING id::text`,
    [tenantId, subscriptionId],
  );
  return rows[0]!.id;
}

/**
 * Two due deliveries of the endpoint committed out of creation order: `older` is written first but
 * committed only when `commitOlder` is called; `newer` is committed at once.
 */
async function deliveriesCommittedOutOfOrder(tenantId: string, subscriptionId: string) {
  const writer = await connect();
  await writer.query("BEGIN");
  const older = await writeDelivery(writer, tenantId, subscriptionId);
  const newer = await writeDelivery(await connect(), tenantId, subscriptionId);
  return { older, newer, commitOlder: () => writer.query("COMMIT") };
}

async function leasedDeliveries(subscriptionId: string): Promise<string[]> {
  const c = await connect();
  const { rows } = await c.query<{ id: string }>(
    `SELECT id::text FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending' AND locked_until > now() ORDER BY seq`,
    [subscriptionId],
  );
  return rows.map((r) => r.id);
}

const claimedIds = (rows: ClaimRow[]) => rows.flatMap((r) => (r.delivery_id ? [r.delivery_id] : []));

describe.skipIf(!onPostgres)("a claim whose snapshot predates another claim's commit on the same endpoint", () => {
  it("takes_nothing_from_that_endpoint_so_a_cap_of_1_holds_1_attempt_and_says_it_left_one_alone", async () => {
    const { tenantId, subscriptionId } = await endpoint("http://127.0.0.1:9/cap");
    const { older, commitOlder } = await deliveriesCommittedOutOfOrder(tenantId, subscriptionId);
    const gate = await pauseGate();
    const late = await gate.pausedConnection();
    // Its snapshot: only the newer delivery due, nothing in flight (room 1). It stops before its row lock.
    const lateClaim = late.client.query<ClaimRow>(CLAIM, claimArgs(4, 1));
    await gate.reached(late.pid);
    await commitOlder();
    // Another process's claim: it sees both, takes the older (its room is 1) and commits.
    const first = await (await connect()).query<ClaimRow>(CLAIM, claimArgs(4, 1));
    expect(claimedIds(first.rows)).toEqual([older]);
    await gate.open();
    const { rows } = await lateClaim;
    // One attempt in flight, the cap; before, the late claim took the newer one as well (2 in flight).
    expect(await leasedDeliveries(subscriptionId)).toEqual([older]);
    expect(claimedIds(rows)).toEqual([]);
    expect(rows.map((r) => r.changed_skipped)).toEqual([1]);
    // Claimed again with a fresh snapshot: the endpoint is full, nothing to take, nothing left alone.
    const again = await late.client.query<ClaimRow>(CLAIM, claimArgs(4, 1));
    expect(again.rows).toEqual([expect.objectContaining({ delivery_id: null, changed_skipped: 0 })]);
  });

  it("worker_that_left_the_endpoint_alone_claims_it_again_at_once_not_at_the_next_poll", async () => {
    process.env.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = "2";
    const consumer = await startConsumer(200);
    consumers.push(consumer);
    const { tenantId, subscriptionId } = await endpoint(consumer.url());
    const { older, newer, commitOlder } = await deliveriesCommittedOutOfOrder(tenantId, subscriptionId);
    const gate = await pauseGate();
    const late = await gate.pausedConnection();
    const claimRunner: SqlRunner = async <Row>(statement: { text: string }, values: unknown[]) =>
      (await late.client.query(statement.text, values)).rows as Row[];
    // Nothing but its own claims wakes this worker for a minute: no NOTIFY (rows written in SQL), no timers.
    await openDatabase();
    await startEmbeddedWorker({ claimRunner, pollIntervalMs: 60_000 });
    await gate.reached(late.pid);
    await commitOlder();
    // Another process's claim takes the older delivery (and never sends it: it stays in flight, 1 of 2).
    const first = await (await connect()).query<ClaimRow>(CLAIM, claimArgs(1, 2));
    expect(claimedIds(first.rows)).toEqual([older]);
    await gate.open();
    // The worker's claim left the endpoint alone; its next claim, at once, finds room for the newer one.
    await consumer.waitFor(1, 5_000);
    const c = await connect();
    const delivered = async () =>
      (await c.query<{ id: string }>(`SELECT id::text FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'delivered'`, [subscriptionId])).rows;
    expect(await eventually(async () => (await delivered()).length > 0 && delivered())).toEqual([{ id: newer }]);
    expect(consumer.received).toHaveLength(1);
  });
});
