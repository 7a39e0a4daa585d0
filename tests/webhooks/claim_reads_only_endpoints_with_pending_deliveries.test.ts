// The paced claim runs every few milliseconds while deliveries flow. It must look only at the
// subscriptions that have pending deliveries (a skip scan of a partial index), not at every enabled
// subscription or every due delivery in the database: at thousands of tenants, either read would
// cost more than the claim's own work. Measured in the rows the claim's scans read, from its own
// EXPLAIN ANALYZE (its generic plan, as the worker runs it), inside a transaction that is rolled
// back. PostgreSQL only: the test needs a connection of its own, which the embedded PGlite has not.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { databaseKind, directDatabaseUrl } from "../../server/db/location";
import { pacedClaimSql } from "../../server/webhooks/claim-deliveries";
import { tenantWithKey } from "../helpers/api";
import { dashboardCaller } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const onPostgres = databaseKind() === "postgres";
const IDLE = 300;
// capacity, lease ms, own ids, horizon ms, per endpoint, per tenant, probe interval ms, own successes
const CLAIM_ARGS = [4, 30_000, "", 250, 8, 24, 30_000, ""];

type Reads = { subscriptions: number; deliveries: number };
type PlanNode = {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
};

/** Rows the plan's scans of each table produced or looked at and dropped, over all their loops. */
function rowsScanned(node: PlanNode, into: Reads = { subscriptions: 0, deliveries: 0 }): Reads {
  const table = node["Relation Name"] === "webhook_subscriptions" ? "subscriptions" : node["Relation Name"] === "webhook_deliveries" ? "deliveries" : null;
  if (table) into[table] += (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) * node["Actual Loops"];
  for (const child of node.Plans ?? []) rowsScanned(child, into);
  return into;
}

/** Rows one claim's scans read (EXPLAIN ANALYZE of the prepared claim), rolled back afterwards: nothing leased, nothing paced. */
async function rowsOneClaimReads(c: pg.Client): Promise<Reads> {
  // Planned on statistics that include what the test wrote (as autovacuum's would, in production).
  await c.query("ANALYZE webhook_deliveries, webhook_subscriptions, events");
  await c.query(`PREPARE paced_claim AS ${pacedClaimSql("d.inngest_run_id IS NULL")}`);
  await c.query("SAVEPOINT claim");
  const { rows } = await c.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE paced_claim(${CLAIM_ARGS.map((a) => (typeof a === "string" ? `'${a}'` : a)).join(", ")})`,
  );
  await c.query("ROLLBACK TO SAVEPOINT claim");
  await c.query("DEALLOCATE paced_claim");
  return rowsScanned(rows[0]!["QUERY PLAN"][0].Plan);
}

/** A transaction on its own connection, rolled back at the end: what the test writes is never seen by anyone else. */
async function inRolledBackTransaction(run: (c: pg.Client) => Promise<void>) {
  const client = new pg.Client({ connectionString: directDatabaseUrl() });
  try {
    await client.connect();
    await client.query("BEGIN");
    // As the worker runs it (`database().generic`): one plan, whatever the arguments.
    await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
    await run(client);
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end();
  }
}

/** A backlog of IDLE due deliveries to one endpoint (a consumer that was down, say). */
async function backlog(c: pg.Client, tenantId: string, subscriptionId: string) {
  await c.query(
    `WITH e AS (
       INSERT INTO events (id, tenant_id, type, data) SELECT gen_random_uuid(), $1, 'csat.received', '{}'::jsonb FROM generate_series(1, ${IDLE})
       RETURNING id)
     INSERT INTO webhook_deliveries (id, tenant_id, subscription_id, event_id, next_attempt_at) SELECT gen_random_uuid(), $1, $2, e.id, now() - interval '1 minute' FROM e`,
    [tenantId, subscriptionId],
  );
}

async function endpoint() {
  const { tenantId } = await tenantWithKey();
  const sub = await dashboardCaller(tenantId).webhooks.createSubscription({
    url: "http://127.0.0.1:9/claim-reads",
    events: ["csat.received"],
    max_deliveries_per_second: 10,
  });
  return { tenantId, subscriptionId: sub.id };
}

describe.skipIf(!onPostgres)("the paced claim's reads", () => {
  it("claim_reads_no_more_rows_with_300_idle_enabled_endpoints_in_the_database_beside_a_backlog", async () => {
    const { tenantId, subscriptionId } = await endpoint();
    await inRolledBackTransaction(async (c) => {
      const before = await rowsOneClaimReads(c);
      // Whichever the plan drives from, the endpoints or the due deliveries, it meets many of one kind.
      await backlog(c, tenantId, subscriptionId);
      // Enabled, healthy, due for a send slot: everything an endpoint with work would be, but no pending delivery.
      await c.query(
        `INSERT INTO webhook_subscriptions (id, tenant_id, target_url, secret_encrypted, secret_prefix, events, enabled, created_at, updated_at,
           max_deliveries_per_second, next_delivery_at, consecutive_failures)
         SELECT gen_random_uuid(), tenant_id, target_url || '/' || g, secret_encrypted, secret_prefix, events, true, now(), now(),
           max_deliveries_per_second, now() - interval '1 minute', 0
         FROM webhook_subscriptions, generate_series(1, ${IDLE}) g WHERE id = $1`,
        [subscriptionId],
      );
      const after = await rowsOneClaimReads(c);
      // The backlog's endpoint's first due deliveries (its room: 8 in flight) and a few probes; none of the idle endpoints.
      expect(after.subscriptions - before.subscriptions).toBeLessThan(20);
      expect(after.deliveries - before.deliveries).toBeLessThan(40);
    });
  });

  it("claim_reads_an_endpoints_first_due_deliveries_not_its_whole_backlog", async () => {
    const { tenantId, subscriptionId } = await endpoint();
    await inRolledBackTransaction(async (c) => {
      const before = await rowsOneClaimReads(c);
      await backlog(c, tenantId, subscriptionId);
      const after = await rowsOneClaimReads(c);
      // At most the endpoint's room (8 in flight) of them, plus a few probes; slack as above.
      expect(after.deliveries - before.deliveries).toBeLessThan(40);
      expect(after.subscriptions - before.subscriptions).toBeLessThan(10);
    });
  });
});
