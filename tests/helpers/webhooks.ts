// Webhook test helpers: a dashboard tRPC caller for a tenant, the delivery rows of a tenant, and
// worker processes (webhook-worker-process.ts) to start, stop gracefully or kill.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
export { dashboardCaller } from "./api";
import { dashboardCaller, tenantWithKey } from "./api";
import { type Consumer, eventually } from "./webhook-consumer";
import { exitOf } from "./http-client";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { listDeliveries } from "../../server/webhooks/webhooks.service";
import { emitEvent } from "../../server/events/emit-any-event";

/** Every delivery of a tenant (or of one subscription), newest first: all pages. */
export async function deliveriesOf(tenantId: string, subscriptionId?: string) {
  const db = scopeToTenant(await getDb(), tenantId);
  const all = [];
  let cursor: string | undefined;
  do {
    const page = await listDeliveries(db, { limit: 100, cursor, subscription_id: subscriptionId });
    all.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}

/** Starts webhook-worker-process.ts with this process's environment plus `env`; resolves once it is ready. */
export async function startWorkerProcess(env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve(__dirname, "webhook-worker-process.ts")], {
    env: { ...process.env, LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
  });
  return child;
}

/**
 * Stops a worker process gracefully and resolves on its exit: its attempts in flight have been
 * sent and recorded by then, and it sends nothing more.
 */
export async function stopWorkerProcess(child: ChildProcess): Promise<void> {
  const exited = exitOf(child, 30_000);
  child.kill("SIGTERM");
  const { code, signal } = await exited;
  if (code !== 0) throw new Error(`worker process exited with ${code ?? signal} on SIGTERM`);
}

/** Kills a worker process outright (mid-attempt) and resolves on its exit. */
export async function killWorkerProcess(child: ChildProcess): Promise<void> {
  const exited = exitOf(child, 30_000);
  child.kill("SIGKILL");
  await exited;
}

/** Emits `count` csat.received events one after another (one transaction each); their envelope ids in order. */
export async function emitInOrder(tenantId: string, count: number): Promise<string[]> {
  const db = scopeToTenant(await getDb(), tenantId);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { eventId } = await db.$transaction((tx) =>
      emitEvent(tx, "csat.received", {
        object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 5, comment: `#${i}`, created_at: new Date().toISOString() },
      }),
    );
    ids.push(`evt_${eventId}`);
  }
  return ids;
}

/**
 * Proves the delivery worker has claimed since this call: emits an event for a fresh tenant
 * subscribed at `consumer`'s `path` and resolves once it arrives. Every claim looks at each
 * subscription with due work, so anything due now that a claim may take would have been leased by
 * then: a test asserts an absence (nothing claimed, nothing sent) after it instead of a fixed sleep.
 */
export async function aClaimHasPassed(consumer: Consumer, path = "/sentinel", timeoutMs = 10_000): Promise<void> {
  const { tenantId } = await tenantWithKey();
  await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(path), events: ["csat.received"] });
  const [id] = await emitInOrder(tenantId, 1);
  await eventually(async () => consumer.received.some((r) => r.path === path && r.body?.id === id), timeoutMs, 10);
}
