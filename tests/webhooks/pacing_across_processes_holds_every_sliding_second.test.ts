// Pacing across processes: with max_deliveries_per_second = 5 and two worker processes sharing one
// PostgreSQL, no sliding one-second window holds more than 5 sends. Exactly, with no allowance, on
// the moments the two processes started their POSTs (each attempt row's created_at: one machine, one
// clock); and at a real consumer in a process of its own, allowing for that consumer's own scheduling
// on a loaded machine. The send slots are shared and spaced slightly wider than 1/rate, and a send
// that would go out late takes a new slot instead of crowding the ones after it (on main, two
// processes put 6 sends in a second). PostgreSQL only (real worker processes).
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { eventually, startCountingConsumerProcess } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, emitInOrder, startWorkerProcess } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const children: ChildProcess[] = [];
const closers: (() => void)[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const close of closers) close();
});

/** How much a busy consumer process may compress the gaps it measures (descheduled, it stamps late). */
const CONSUMER_JITTER_MS = 150;

/** The most moments inside any window [t, t + 1000 ms - allowance). */
function mostInAnySecond(times: number[], allowanceMs = 0): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= 1000 - allowanceMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe.skipIf(!process.env.DATABASE_URL)("pacing across worker processes", () => {
  it("two_worker_processes_at_5_a_second_never_put_6_sends_in_any_sliding_second", async () => {
    const consumer = await startCountingConsumerProcess();
    closers.push(consumer.close);
    const { tenantId } = await tenantWithKey();
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["csat.received"], max_deliveries_per_second: 5 });
    for (const child of await Promise.all([startWorkerProcess(), startWorkerProcess()])) children.push(child);
    const EVENTS = 40;
    const ids = await emitInOrder(tenantId, EVENTS);
    const arrivals = await consumer.waitFor(EVENTS, 40_000);
    expect(arrivals.map((a) => a.id).sort()).toEqual([...ids].sort());
    const deliveries = await eventually(async () => {
      const list = await deliveriesOf(tenantId);
      return list.length === EVENTS && list.every((d) => d.status === "delivered") ? list : null;
    });
    expect(deliveries.map((d) => d.attempt_count)).toEqual(ids.map(() => 1));
    const sent = deliveries.map((d) => Date.parse(d.attempts[0].created_at)).sort((a, b) => a - b);
    expect(mostInAnySecond(sent)).toBeLessThanOrEqual(5);
    const received = arrivals.map((a) => a.at).sort((a, b) => a - b);
    expect(mostInAnySecond(received, CONSUMER_JITTER_MS)).toBeLessThanOrEqual(5);
    // Paced, not slowed to a crawl: 40 at 5 a second (slots 5% apart) take about 8 s.
    expect(received.at(-1)! - received[0]).toBeLessThan(12_000);
  }, 90_000);
});
