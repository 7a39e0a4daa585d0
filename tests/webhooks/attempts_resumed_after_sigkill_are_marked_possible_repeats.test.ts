// A worker process killed with SIGKILL while its attempts are at the consumer (which holds them):
// each attempt was recorded as started before its POST, so when the next worker takes the
// deliveries after their lease, every resent request carries `webhook-possible-repeat: true` and its
// attempt row says `possible_repeat`; the first sends carry neither, and nothing is lost.
// PostgreSQL only (real worker processes; PGlite admits a single process).
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, emitInOrder, killWorkerProcess, startWorkerProcess, stopWorkerProcess } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const children: ChildProcess[] = [];
let consumer: Consumer | undefined;
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await consumer?.close();
});

const EVENTS = 6;
// A short lease, so the second worker takes the killed one's deliveries within the test; a long
// attempt timeout, so the held requests never time out first.
const WORKER_ENV = { WEBHOOK_LEASE_MS: "3000", WEBHOOK_ATTEMPT_TIMEOUT_MS: "30000", WEBHOOK_POLL_INTERVAL_MS: "100" };

describe.skipIf(!process.env.DATABASE_URL)("attempts in flight when a worker is killed", () => {
  it("resent_after_sigkill_each_delivery_is_marked_possible_repeat_and_none_is_lost", async () => {
    let holding = true;
    consumer = await startConsumer(() => (holding ? "hang" : 200));
    const { tenantId } = await tenantWithKey();
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["csat.received"], max_deliveries_per_second: 1000 });

    const first = await startWorkerProcess(WORKER_ENV);
    children.push(first);
    const ids = await emitInOrder(tenantId, EVENTS);
    await consumer.waitFor(EVENTS, 20_000); // every attempt is at the consumer, unanswered
    await killWorkerProcess(first);
    holding = false;

    const second = await startWorkerProcess(WORKER_ENV);
    children.push(second);
    await consumer.waitFor(2 * EVENTS, 30_000);
    await eventually(async () => ((list) => list.length === EVENTS && list.every((d) => d.status === "delivered"))(await deliveriesOf(tenantId)), 20_000);
    // Stopped gracefully, the second worker has sent and recorded all it ever will (the first was killed).
    await stopWorkerProcess(second);
    const deliveries = await deliveriesOf(tenantId);

    const firstSends = consumer.received.slice(0, EVENTS);
    const resent = consumer.received.slice(EVENTS);
    expect(firstSends.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort());
    expect(firstSends.map((r) => r.headers["webhook-possible-repeat"])).toEqual(ids.map(() => undefined));
    expect(resent.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort());
    expect(resent.map((r) => r.headers["webhook-possible-repeat"])).toEqual(ids.map(() => "true"));
    // Nothing else arrived, and the log shows one attempt per delivery, marked.
    expect(consumer.received).toHaveLength(2 * EVENTS);
    for (const d of deliveries) {
      expect(d.attempt_count).toBe(1);
      expect(d.attempts.map((a) => [a.attempt_number, a.outcome, a.possible_repeat, a.request_headers?.["webhook-possible-repeat"]])).toEqual([
        [1, "delivered", true, "true"],
      ]);
    }
  }, 90_000);

  it("an_attempt_with_no_worker_stopped_in_between_is_no_possible_repeat", async () => {
    const c = await startConsumer(200);
    try {
      const { tenantId } = await tenantWithKey();
      await dashboardCaller(tenantId).webhooks.createSubscription({ url: c.url(), events: ["csat.received"], max_deliveries_per_second: 1000 });
      const worker = await startWorkerProcess(WORKER_ENV);
      children.push(worker);
      await emitInOrder(tenantId, 3);
      const deliveries = await eventually(async () => {
        const list = await deliveriesOf(tenantId);
        return list.length === 3 && list.every((d) => d.status === "delivered") ? list : null;
      }, 20_000);
      expect(deliveries.flatMap((d) => d.attempts.map((a) => a.possible_repeat))).toEqual([false, false, false]);
      expect(c.received.map((r) => r.headers["webhook-possible-repeat"])).toEqual([undefined, undefined, undefined]);
      await killWorkerProcess(worker);
    } finally {
      await c.close();
    }
  }, 60_000);
});
