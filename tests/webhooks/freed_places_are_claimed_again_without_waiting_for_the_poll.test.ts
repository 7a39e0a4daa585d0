// After a claim that found less than it had room for, the embedded worker lets a few freed places
// gather before it claims again (fewer, larger claims under load), but never for longer than a few
// milliseconds: a place freed one at a time is filled again without waiting for the next poll, and
// new work is claimed at once. Here the poll is a minute away, so only that bound can move B's
// deliveries along: the tenant's cap leaves B's endpoint one place at a time beside A's hanging one.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, emitInOrder } from "../helpers/webhooks";
import { openDatabase } from "../../server/db/database";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const SETTINGS = ["WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT", "WEBHOOK_MAX_IN_FLIGHT_PER_TENANT", "WEBHOOK_ATTEMPT_TIMEOUT_MS"] as const;

let consumers: Consumer[] = [];
async function cleanUp() {
  for (const c of consumers) await c.close();
  consumers = [];
  await stopEmbeddedWorker();
  for (const name of SETTINGS) delete process.env[name];
}
afterEach(cleanUp);
afterAll(cleanUp);

describe("gathering freed places before a claim", () => {
  it("places_freed_one_at_a_time_are_filled_again_long_before_the_next_poll", async () => {
    // The tenant holds 4 places; its hanging endpoint takes 3 of them for the whole test.
    process.env.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = "3";
    process.env.WEBHOOK_MAX_IN_FLIGHT_PER_TENANT = "4";
    process.env.WEBHOOK_ATTEMPT_TIMEOUT_MS = "60000";
    const { tenantId } = await tenantWithKey();
    const hanging = await startConsumer("hang");
    const healthy = await startConsumer(200);
    consumers.push(hanging, healthy);
    const caller = dashboardCaller(tenantId);
    await caller.webhooks.createSubscription({ url: hanging.url(), events: ["csat.received"], max_deliveries_per_second: 1000 });
    const b = await caller.webhooks.createSubscription({ url: healthy.url(), events: ["csat.received"], max_deliveries_per_second: 1000 });
    // Written before the worker starts: no new delivery wakes it once it runs. Its 8 places are more
    // than the tenant's 4, so every claim finds less than it has room for, and gathers.
    const ids = await emitInOrder(tenantId, 12);
    await openDatabase();
    await startEmbeddedWorker({ concurrency: 8, pollIntervalMs: 60_000 });
    await eventually(async () => hanging.received.length === 3);
    // Once A holds 3, each of B's deliveries waits for the one before it to free the tenant's last place.
    await healthy.waitFor(12, 15_000);
    expect(new Set(healthy.received.map((r) => r.body.id as string))).toEqual(new Set(ids));
    expect(healthy.received).toHaveLength(12);
    expect(hanging.received).toHaveLength(3);
    const delivered = await eventually(async () =>
      ((list) => list.length === 12 && list.every((d) => d.status === "delivered") && list)(await deliveriesOf(tenantId, b.id)),
    );
    expect(delivered.every((d) => d.attempt_count === 1)).toBe(true);
  }, 60_000);
});
