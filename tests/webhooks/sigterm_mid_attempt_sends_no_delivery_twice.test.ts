// SIGTERM while the embedded worker has attempts in flight to a slow consumer: the process waits
// for their answers, records them, claims nothing more, and exits 0; the next process delivers
// the rest. Every event arrives exactly once.
import { afterAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { startAsyncConsumer } from "../helpers/async-consumer";
import { exitOf, waitUntilRefused } from "../helpers/http-client";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

requireNextBuild();

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const EVENTS = 12;
const CONCURRENCY = 8;
const MOUNT_ENV = {
  WEBHOOK_ALLOW_LOOPBACK: "1",
  WEBHOOK_WORKER_CONCURRENCY: String(CONCURRENCY),
  // The consumer holds its answers until the signal: no attempt may time out meanwhile.
  WEBHOOK_ATTEMPT_TIMEOUT_MS: "30000",
  SHUTDOWN_TIMEOUT_MS: "15000",
};

const mounts: Running[] = [];
let consumer: Awaited<ReturnType<typeof startAsyncConsumer>> | undefined;
afterAll(async () => {
  for (const m of mounts) await m.stop();
  await consumer?.close();
});

describe("SIGTERM with webhook attempts in flight (needs `next build`)", () => {
  it("attempts_in_flight_at_sigterm_are_recorded_and_no_event_arrives_twice", async () => {
    // The consumer holds every answer until the process has been told to stop, then answers slowly.
    let signalled!: () => void;
    const stopping = new Promise<void>((resolve) => (signalled = resolve));
    consumer = await startAsyncConsumer(async () => {
      await stopping;
      await new Promise((resolve) => setTimeout(resolve, 500));
      return 200;
    });
    const { tenantId, key } = await tenantWithKey();
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    const first = await startMount("lean", MOUNT_ENV);
    mounts.push(first);
    // The events are written through the running front (its worker is woken by each).
    for (let i = 0; i < EVENTS; i++) {
      const res = await fetch(`${first.url}/api/v1/offerings`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ title: `O${i}`, price: "1.00", price_currency: "USD" }),
      });
      expect(res.status).toBe(201);
    }
    await consumer.waitFor(CONCURRENCY, 60_000); // a full batch is in flight at the consumer
    const exited = exitOf(first.proc, 30_000);
    first.proc.kill("SIGTERM");
    await waitUntilRefused(Number(new URL(first.url).port)); // the process is stopping…
    signalled(); // …and now its attempts get their answers
    expect(await exited).toMatchObject({ code: 0, signal: null });
    expect(consumer.arrivals).toHaveLength(CONCURRENCY); // nothing claimed after the signal

    const second = await startMount("lean", MOUNT_ENV);
    mounts.push(second);
    await consumer.waitFor(EVENTS, 60_000);
    const secondExited = exitOf(second.proc, 30_000);
    second.proc.kill("SIGTERM");
    expect(await secondExited).toMatchObject({ code: 0, signal: null });

    // Every delivery recorded delivered after one attempt: an attempt the first process left
    // unrecorded would still be pending here (under its lease), and sent again after it.
    const deliveries = await deliveriesOf(tenantId);
    expect(deliveries).toHaveLength(EVENTS);
    expect(deliveries.map((d) => [d.status, d.attempts.length])).toEqual(Array(EVENTS).fill(["delivered", 1]));
    expect([...consumer.arrivalsPerEvent().values()]).toEqual(Array(EVENTS).fill(1));
    expect(deliveries.map((d) => d.attempts[0].id).sort()).toEqual(consumer.arrivals.map((a) => a.deliveryHeader).sort());
  }, 180_000);
});
