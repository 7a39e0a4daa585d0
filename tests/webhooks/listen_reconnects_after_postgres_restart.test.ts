// The worker's LISTEN connection comes back after PostgreSQL restarts: an event written by another
// process afterwards is delivered at once, though the worker's poll is a minute away.
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey } from "../helpers/api";
import { moveToOwnCluster, type PostgresServer } from "../helpers/postgres-server";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller } from "../helpers/webhooks";
import { openDatabase } from "../../server/db/database";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const POLL_MS = 60_000;

/** Writes one event from another process; resolves when that process has committed it and exited. */
function emitFromAnotherProcess(url: string, tenantId: string): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve(__dirname, "../helpers/emit-event-process.ts")], {
    env: { ...process.env, DATABASE_URL: url, TENANT_ID: tenantId, LOG_LEVEL: "silent" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  return new Promise((resolve, reject) => child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`emitter exited ${code}`)))));
}

describe.skipIf(!process.env.DATABASE_URL)("LISTEN across a PostgreSQL restart", () => {
  let own: Awaited<ReturnType<typeof moveToOwnCluster>>;
  let cluster: PostgresServer;
  let consumer: Consumer;
  let tenantId: string;

  beforeAll(async () => {
    own = await moveToOwnCluster(); // this process's worker runs on the cluster
    cluster = own.cluster;
    consumer = await startConsumer(200);
    ({ tenantId } = await tenantWithKey());
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["csat.received"] });
    await openDatabase();
    await startEmbeddedWorker({ pollIntervalMs: POLL_MS });
  }, 120_000);

  afterAll(async () => {
    await stopEmbeddedWorker();
    await consumer?.close();
    await own?.restore();
  });

  it("event_from_another_process_is_delivered_within_seconds_after_a_restart", async () => {
    await emitFromAnotherProcess(cluster.url, tenantId);
    await consumer.waitFor(1, 5_000); // LISTEN works before the restart

    await cluster.halt("fast");
    await new Promise((r) => setTimeout(r, 3_000)); // down for a while: reconnect attempts fail meanwhile
    await cluster.resume();

    await emitFromAnotherProcess(cluster.url, tenantId);
    const written = Date.now();
    await consumer.waitFor(2, 8_000); // far under the 60 s poll: only LISTEN can have woken the worker
    expect(consumer.received[1].at - written).toBeLessThan(5_000);
    expect(consumer.received.map((r) => r.body.event)).toEqual(["csat.received", "csat.received"]);
    expect(new Set(consumer.received.map((r) => r.body.id)).size).toBe(2);
  }, 60_000);
});
