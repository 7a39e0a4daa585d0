// The embedded worker survives its process dying mid-attempt: the delivery's lease expires, a
// restarted worker takes it again, and every recorded attempt is still there (nothing lost).
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, killWorkerProcess, startWorkerProcess, stopWorkerProcess } from "../helpers/webhooks";
import { closeDatabase } from "../../server/db/database";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const WORKER_ENV = {
  WEBHOOK_RETRY_DELAYS_MS: "0,200,200,200,200,200",
  WEBHOOK_ATTEMPT_TIMEOUT_MS: "5000",
  WEBHOOK_LEASE_MS: "1500",
  WEBHOOK_ALLOW_LOOPBACK: "1",
  LOG_LEVEL: "silent",
};

const children: ChildProcess[] = [];
let consumer: Consumer | undefined;
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await consumer?.close();
});

async function startWorker(): Promise<ChildProcess> {
  const child = await startWorkerProcess(WORKER_ENV);
  children.push(child);
  return child;
}

describe("embedded worker across process restarts", () => {
  it("a delivery in flight when its worker is killed is retried after a restart; no attempt is lost", async () => {
    consumer = await startConsumer((_req, i) => (i < 2 ? 503 : i === 2 ? "hang" : 200));
    const { tenantId, key } = await tenantWithKey();
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    expect((await call("POST", "/offerings", { key, body: { title: "A", price: 1, price_currency: "USD" } })).status).toBe(201);
    await closeDatabase(); // PGlite admits one process: hand the database to the worker process

    const first = await startWorker();
    await consumer.waitFor(3, 20_000); // attempts 1 and 2 answered 503; attempt 3 is hanging
    await killWorkerProcess(first);

    const second = await startWorker();
    await consumer.waitFor(4, 20_000); // the lease expired: attempt 3 again, answered 200
    await stopWorkerProcess(second); // exits once that answer is recorded

    const [delivery] = await deliveriesOf(tenantId);
    expect(delivery).toMatchObject({ status: "delivered", cycle: 1, attempt_count: 3, last_status_code: 200 });
    expect(delivery.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code])).toEqual([
      [1, "retry", 503],
      [2, "retry", 503],
      [3, "delivered", 200],
    ]);
    const sent = consumer.received.map((r) => r.headers["x-delivery-id"]);
    expect(delivery.attempts.map((a) => a.id)).toEqual([sent[0], sent[1], sent[3]]); // the killed attempt was never recorded
    expect(new Set(consumer.received.map((r) => r.body.id)).size).toBe(1);
  }, 120_000);
});
