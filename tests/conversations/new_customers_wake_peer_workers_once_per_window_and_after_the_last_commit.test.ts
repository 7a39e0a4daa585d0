// Every notifying commit takes one lock for the whole PostgreSQL server, so the ingest of a burst of
// new customers does not NOTIFY per message: at most once per window from the statement, then one
// owed wake-up after the window, sent after the last of those messages committed (a peer's worker
// woken by it finds every delivery).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { ingestInboundMessage } from "../../server/conversations/ingest";
import { OUTBOX_CHANNEL } from "../../server/outbox/outbox-signal";
import { newTenant } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";

describe.skipIf(!process.env.DATABASE_URL)("the wake-up of other processes' delivery workers by new customers", () => {
  let listener: pg.Client;
  const received: number[] = [];

  beforeAll(async () => {
    listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await listener.connect();
    listener.on("notification", (n) => {
      if (n.channel === OUTBOX_CHANNEL) received.push(performance.now());
    });
    await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
  });
  afterAll(() => listener.end());

  it("a_burst_of_40_new_customers_notifies_a_few_times_and_once_after_the_last_answer", async () => {
    const { id: tenantId } = await newTenant();
    await (await openDatabase()).prisma.webhookSubscription.create({
      data: { tenantId, targetUrl: "https://consumer.example/hooks", secretEncrypted: "x", secretPrefix: "x", events: ["conversation.created"] },
    });
    const db = await tenantDb(tenantId);
    // Past any window a previous test opened.
    await new Promise((r) => setTimeout(r, 50));
    received.length = 0;

    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        ingestInboundMessage(db, { provider: "twilio", providerMessageId: `SMwake${process.pid}x${i}`, channel: "sms", from: uniquePhone(), body: "hello" }),
      ),
    );
    const lastAnswer = performance.now();
    expect(results.filter((r) => r.conversationCreated)).toHaveLength(40);
    const deliveries = await (await openDatabase()).prisma.webhookDelivery.count({ where: { tenantId } });
    expect(deliveries).toBe(40);

    // The owed wake-up comes within the 20-ms window (plus the round trip), after the last answer.
    const deadline = Date.now() + 2_000;
    while (!received.some((t) => t > lastAnswer) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(received.some((t) => t > lastAnswer)).toBe(true);
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received.length).toBeLessThan(40);
  });
});
