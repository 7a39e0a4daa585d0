// Whether a provider message is stored already must be found through the messages' unique key
// (tenant, provider, provider message id) whatever the statistics. The ingest statements are
// prepared, and PostgreSQL plans a prepared statement once for any values (its generic plan) after
// a few calls, and keeps that plan until the table's statistics change. Planned while the messages
// table has never been analyzed (a fresh deployment's first minutes), a lookup by equality on the
// key's three columns ties with the tenant's (created_at, direction) index, and that plan walks
// every message of the tenant for every new customer. Likewise the update that counts a message on
// its conversation goes by the conversation's primary key, never a walk of the tenant's
// conversations. (Finding the pair's conversation itself still depends on statistics: docs/perf/2026-11-ingest.md.)
// Checked on the plans themselves (EXPLAIN of the generic plan, nothing executed) in a transaction
// rolled back, over the messages and conversations tables of this file's own fresh database, never
// analyzed. PostgreSQL only: PGlite has no plan cache modes and no second connection.
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { databaseKind, directDatabaseUrl, getDb, type Statement } from "../../server/db/client";
import { CONTINUE, INGEST } from "../../server/conversations/ingest";
import { newTenant } from "../helpers/api";

type PlanNode = {
  "Node Type": string;
  Operation?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Conflict Arbiter Indexes"?: string[];
  Plans?: PlanNode[];
};

/**
 * The plan's accesses: to messages, "<node> using <index>" (scans) or "<node> arbiter <indexes>" (the
 * insert's conflict check); and the scans that find the conversation to count (under its update).
 */
function accessesOf(node: PlanNode, into = { messages: [] as string[], countedConversation: [] as string[] }, underUpdate = false) {
  if (node["Relation Name"] === "messages") {
    if (node["Node Type"] === "ModifyTable") into.messages.push(`${node["Node Type"]} arbiter ${(node["Conflict Arbiter Indexes"] ?? []).join(",") || "-"}`);
    else into.messages.push(`${node["Node Type"]} using ${node["Index Name"] ?? "-"}`);
  }
  if (underUpdate && node["Relation Name"] === "conversations" && node["Node Type"] !== "ModifyTable")
    into.countedConversation.push(`${node["Node Type"]} using ${node["Index Name"] ?? "-"}`);
  const update = node["Node Type"] === "ModifyTable" && node.Operation === "Update" && node["Relation Name"] === "conversations";
  for (const child of node.Plans ?? []) accessesOf(child, into, update || (underUpdate && node["Node Type"] !== "ModifyTable"));
  return into;
}

// One value per parameter ($1 … $16, the first `params` of them); a generic plan does not depend on them.
const args = (tenantId: string, params: number) =>
  [`'${tenantId}'`, "NULL", "NULL", "'sms'", "'+971500000001'", "'hello'", "'twilio'", "'SMnew'", `'${new Date().toISOString()}'`]
    .concat(["gen_random_uuid()", "NULL", "'{}'", "false", "NULL", "NULL", "'normalized'"])
    .slice(0, params)
    .join(", ");

async function genericPlanAccesses(c: pg.Client, name: string, statement: Statement, tenantId: string, params: number) {
  await c.query(`PREPARE ${name} AS ${statement.text}`);
  const { rows } = await c.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${args(tenantId, params)})`);
  await c.query(`DEALLOCATE ${name}`);
  return accessesOf(rows[0]!["QUERY PLAN"][0].Plan);
}

/** A connection of its own; a transaction left open is rolled back when it closes. */
async function withClient<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: directDatabaseUrl() });
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

describe.skipIf(databaseKind() !== "postgres")("the ingest statements' generic plans over a never-analyzed messages table", () => {
  beforeAll(async () => {
    await getDb();
    // The table stays never analyzed for the whole file: autovacuum would otherwise analyze (or
    // vacuum, over the rolled-back rows) this database's tables whenever it came by.
    await withClient((c) => c.query("ALTER TABLE messages SET (autovacuum_enabled = false); ALTER TABLE conversations SET (autovacuum_enabled = false)"));
  });

  // 150 to 300 rows in a fresh table drew the tenant index's plan for the check the statement made
  // before (issue #33); the other sizes cover the estimates around them (an unanalyzed table's row
  // count is guessed from its pages, and the rolled-back rows of each case stay in them).
  it.each([300, 1, 30, 3000])("with_%i_customers_of_one_tenant_with_a_message_each_the_stored_check_goes_through_the_unique_key_only", async (rows) => {
    const { id: tenantId } = await newTenant();
    await withClient(async (c) => {
      await c.query("BEGIN");
      await c.query(
        `WITH conversation AS (
           INSERT INTO conversations (id, tenant_id, channel, customer_identifier, attributes, message_count, updated_at)
           SELECT gen_random_uuid(), $1::uuid, 'sms', '+97150' || (1000000 + g), '{}', 1, now() FROM generate_series(1, ${rows}) g
           RETURNING id, customer_identifier)
         INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, provider, provider_message_id)
         SELECT gen_random_uuid(), $1::uuid, id, 'inbound', 'customer', 'hi', 'received', 'twilio', 'SM' || customer_identifier FROM conversation`,
        [tenantId],
      );
      // The precondition: no statistics were ever gathered for the table (what a fresh deployment has).
      const { rows: stats } = await c.query<{ reltuples: number }>(
        "SELECT reltuples FROM pg_class WHERE oid IN ('messages'::regclass, 'conversations'::regclass)",
      );
      expect(stats.map((r) => r.reltuples)).toEqual([-1, -1]);
      const { rows: keys } = await c.query<{ name: string }>(
        `SELECT i.indexrelid::regclass::text AS name FROM pg_index i
         WHERE i.indrelid = 'messages'::regclass AND i.indisunique AND NOT i.indisprimary`,
      );
      expect(keys).toHaveLength(1);
      const uniqueKey = keys[0]!.name;
      // As the receivers' sessions run them once PostgreSQL settles on a generic plan.
      await c.query("SET LOCAL plan_cache_mode = force_generic_plan");

      for (const [name, statement, params] of [
        ["ingest", INGEST, 16],
        ["continue_known_pair", CONTINUE, 9],
      ] as const) {
        const accesses = await genericPlanAccesses(c, name, statement, tenantId, params);
        // The message insert's conflict check is on the unique key, and nothing else reads messages
        // except through it (never the tenant's (created_at, direction) index, never a sequential scan).
        expect(accesses.messages).toContain(`ModifyTable arbiter ${uniqueKey}`);
        expect(
          accesses.messages.filter((a) => !a.endsWith(uniqueKey)),
          name,
        ).toEqual([]);
        // The conversation is counted through its primary key, not found among the tenant's.
        expect(accesses.countedConversation, name).toEqual(["Index Scan using conversations_pkey"]);
      }
      await c.query("ROLLBACK");
    });
  });
});
