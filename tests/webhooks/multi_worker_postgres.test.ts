// Several worker processes on one PostgreSQL: FOR UPDATE SKIP LOCKED and the lease mean every
// delivery is attempted exactly once even when three workers race for the same backlog.
// PostgreSQL only (PGlite admits a single process).
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const children: ChildProcess[] = [];
let consumer: Consumer | undefined;
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await stopEmbeddedWorker();
  await consumer?.close();
});

function startWorkerProcess(): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve(__dirname, "../helpers/webhook-worker-process.ts")], {
    env: { ...process.env, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
  });
}

describe.skipIf(!process.env.DATABASE_URL)("several workers on one PostgreSQL", () => {
  it("attempt each delivery exactly once", async () => {
    consumer = await startConsumer(200);
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    for (const p of ["/one", "/two"]) await owner.webhooks.createSubscription({ url: consumer.url(p), events: ["csat.received"] });
    const db = scopeToTenant(await getDb(), tenantId);
    const EVENTS = 60;
    for (let i = 0; i < EVENTS; i++) {
      await db.$transaction((tx) =>
        emitEvent(tx, "csat.received", {
          object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 5, comment: null, created_at: new Date().toISOString() },
        }),
      );
    }
    await Promise.all([startWorkerProcess(), startWorkerProcess(), startEmbeddedWorker()]);
    await consumer.waitFor(EVENTS * 2, 30_000);
    const deliveries = await eventually(async () => {
      const list = await deliveriesOf(tenantId);
      return list.every((d) => d.status === "delivered") ? list : null;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(consumer.received).toHaveLength(EVENTS * 2);
    expect(new Set(consumer.received.map((r) => `${r.path} ${r.body.id}`)).size).toBe(EVENTS * 2);
    expect(deliveries.every((d) => d.attempts.length === 1)).toBe(true);
  }, 120_000);
});
