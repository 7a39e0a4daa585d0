// Several worker processes on one PostgreSQL: FOR UPDATE SKIP LOCKED and the lease mean every
// delivery is attempted exactly once even when three workers race for the same backlog.
// PostgreSQL only (PGlite admits a single process).
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, startWorkerProcess, stopWorkerProcess } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const children: ChildProcess[] = [];
let consumer: Consumer | undefined;
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await stopEmbeddedWorker();
  await consumer?.close();
});

async function startWorker(): Promise<void> {
  children.push(await startWorkerProcess());
}

describe.skipIf(!process.env.DATABASE_URL)("several workers on one PostgreSQL", () => {
  it("attempt each delivery exactly once", async () => {
    consumer = await startConsumer(200);
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    for (const p of ["/one", "/two"]) await owner.webhooks.createSubscription({ url: consumer.url(p), events: ["csat.received"] });
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    const EVENTS = 60;
    for (let i = 0; i < EVENTS; i++) {
      await db.$transaction((tx) =>
        emitEvent(tx, "csat.received", {
          object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 5, comment: null, created_at: new Date().toISOString() },
        }),
      );
    }
    await openDatabase();
    await Promise.all([startWorker(), startWorker(), startEmbeddedWorker()]);
    await consumer.waitFor(EVENTS * 2, 30_000);
    // All three workers stopped: each finished and recorded its attempts in flight, and sends nothing more.
    await Promise.all([...children.map(stopWorkerProcess), stopEmbeddedWorker()]);
    expect(consumer.received).toHaveLength(EVENTS * 2);
    expect(new Set(consumer.received.map((r) => `${r.path} ${r.body.id}`)).size).toBe(EVENTS * 2);
    const deliveries = await deliveriesOf(tenantId);
    expect(deliveries).toHaveLength(EVENTS * 2);
    expect(deliveries.filter((d) => d.status !== "delivered" || d.attempts.length !== 1)).toEqual([]);
  }, 120_000);
});
