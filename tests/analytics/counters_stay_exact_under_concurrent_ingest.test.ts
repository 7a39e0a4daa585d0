// The per-day counters behind the rollup under one busy tenant: 200 concurrent inbound messages
// (new and returning customers, retried deliveries among them) count exactly, on both databases;
// and on PostgreSQL two transactions inserting the same tenant's messages on different
// connections do not wait for each other (the counters are sharded by connection, where one
// counter row per tenant and day made the second wait for the first's commit).
import pg from "pg";
import { describe, expect, it } from "vitest";
import { databaseKind } from "../../server/db/location";
import { ingestInboundMessage, type InboundMessage } from "../../server/conversations/ingest";
import { call, tenantWithKey } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";

let seq = 0;
const inbound = (from: string, id = `SMcounter${process.pid}x${++seq}`): InboundMessage => ({
  provider: "twilio",
  providerMessageId: id,
  channel: "sms",
  from,
  body: "Do you have a viewing slot on Friday?",
});

async function todayOf(key: string) {
  const res = await call("GET", "/analytics/weekly-rollup?days=7", { key });
  expect(res.status).toBe(200);
  return { today: res.body.daily[6], totals: res.body.totals };
}

describe("counters under concurrent ingest for one tenant", () => {
  it("rollup_counts_exactly_200_messages_and_40_conversations_ingested_concurrently_with_retries", async () => {
    const { key, tenantId } = await tenantWithKey(["read"]);
    const db = await tenantDb(tenantId);
    const customers = Array.from({ length: 40 }, () => uniquePhone());
    const messages = Array.from({ length: 200 }, (_, i) => inbound(customers[i % customers.length]));
    // 30 of them delivered a second time, concurrently with the first delivery: stored and counted once.
    const deliveries = [...messages, ...messages.slice(0, 30)];
    const results = await Promise.all(deliveries.map((m) => ingestInboundMessage(db, m)));
    expect(results.filter((r) => r.stored)).toHaveLength(200);
    expect(results.filter((r) => r.conversationCreated)).toHaveLength(40);

    const { today, totals } = await todayOf(key);
    expect(today.messages).toEqual({ inbound: 200, outbound: 0 });
    expect(today.conversations.by_channel).toEqual({ voice: 0, sms: 40, whatsapp: 0, webchat: 0, email: 0 });
    expect(totals.messages).toEqual({ inbound: 200, outbound: 0 });
    const rows = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM messages WHERE tenant_id = ${tenantId}::uuid`;
    expect(rows[0].n).toBe(200);
    const counted = await db.conversation.findMany({ select: { messageCount: true } });
    expect(counted.map((c) => c.messageCount)).toEqual(Array(40).fill(5));
  });

  it.runIf(databaseKind() === "postgres")("a_second_connection_inserts_the_same_tenants_message_while_the_first_holds_its_transaction_open", async () => {
    const { key, tenantId } = await tenantWithKey(["read"]);
    const db = await tenantDb(tenantId);
    const { id: conversationId } = await db.conversation.create({ data: { channel: "sms", customerIdentifier: uniquePhone() } as never });
    // Two connections in different shards (backend pids differing modulo 16).
    const clients: pg.Client[] = [];
    const shardOf = async (c: pg.Client) => (await c.query("SELECT analytics_shard() AS s")).rows[0].s as number;
    const open = async () => {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      clients.push(client);
      return client;
    };
    const first = await open();
    let second = await open();
    while ((await shardOf(second)) === (await shardOf(first))) second = await open();
    const insert = (c: pg.Client) =>
      c.query(
        `INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status) VALUES (gen_random_uuid(), $1, $2, 'inbound', 'customer', 'x', 'received')`,
        [tenantId, conversationId],
      );
    try {
      await first.query("BEGIN");
      await insert(first); // holds its counter row until it commits
      // Blocked behind the first transaction, this would fail after 5 s instead of completing.
      await second.query("SET statement_timeout = 5000");
      await insert(second);
      let { today } = await todayOf(key);
      expect(today.messages.inbound).toBe(1); // the second's, committed; the first's is not yet
      await first.query("COMMIT");
      ({ today } = await todayOf(key));
      expect(today.messages.inbound).toBe(2);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
