// An attempt whose answer comes back while PostgreSQL restarts is still recorded (the record is
// retried within the attempt's lease), so it is never sent again: exactly one arrival.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey } from "../helpers/api";
import { startAsyncConsumer } from "../helpers/async-consumer";
import { moveToOwnCluster, type PostgresServer } from "../helpers/postgres-server";
import { eventually } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

describe.skipIf(!process.env.DATABASE_URL)("recording an attempt through a PostgreSQL restart", () => {
  let own: Awaited<ReturnType<typeof moveToOwnCluster>>;
  let cluster: PostgresServer;
  let consumer: Awaited<ReturnType<typeof startAsyncConsumer>>;

  beforeAll(async () => {
    own = await moveToOwnCluster(); // this process's worker runs on the cluster
    cluster = own.cluster;
  }, 120_000);

  afterAll(async () => {
    await stopEmbeddedWorker();
    await consumer?.close();
    await own?.restore();
  });

  it("answer_arriving_while_postgres_restarts_is_recorded_once_and_never_sent_again", async () => {
    // The consumer stops PostgreSQL before it answers, and starts it again 300 ms later: the
    // attempt's outcome reaches a worker whose database is down.
    let restarted: Promise<void> | undefined;
    consumer = await startAsyncConsumer(async (_arrival, index) => {
      if (index === 0) {
        await cluster.halt("fast");
        restarted = new Promise((r) => setTimeout(r, 300)).then(() => cluster.resume());
      }
      return 200;
    });
    const { tenantId } = await tenantWithKey();
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["csat.received"] });
    // Short lease: an unrecorded attempt would be claimed and sent again within the test.
    await openDatabase();
    await startEmbeddedWorker({ pollIntervalMs: 50, leaseMs: 8_000 });
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    await db.$transaction((tx) =>
      emitEvent(tx, "csat.received", {
        object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 4, comment: null, created_at: new Date().toISOString() },
      }),
    );

    await consumer.waitFor(1);
    await restarted;
    const [delivery] = await eventually(
      async () => {
        const list = await deliveriesOf(tenantId).catch(() => []);
        return list.length === 1 && list[0].status !== "pending" ? list : null;
      },
      30_000,
      100,
    );
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 1, last_status_code: 200 });
    expect(delivery.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code, a.id])).toEqual([
      [1, "delivered", 200, consumer.arrivals[0].deliveryHeader],
    ]);
    // Recorded delivered, nothing is left to send: the one arrival is all there will be.
    expect(consumer.arrivals).toHaveLength(1);
  }, 60_000);
});
