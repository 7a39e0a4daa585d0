// The embedded engine against a real consumer on 127.0.0.1: first-try delivery with verifiable
// signatures, permanent failure on 4xx, the full ladder to dead-letter with its delays, replay,
// timeouts and resets retried, and each subscription receiving only its own tenant's events.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { call, tenantWithKey } from "../helpers/api";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { openDatabase } from "../../server/db/database";
import { databaseKind } from "../../server/db/location";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";

const DELAYS = [0, 150, 300, 450, 600, 750];
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
process.env.WEBHOOK_RETRY_DELAYS_MS = DELAYS.join(",");
process.env.WEBHOOK_ATTEMPT_TIMEOUT_MS = "1500";
// The ladder alone: a whole ladder of failures would open the endpoint's breaker (endpoint_fairness.test.ts).
process.env.WEBHOOK_BREAKER_FAILURES = "1000";

const consumers: Consumer[] = [];
async function consumer(...args: Parameters<typeof startConsumer>) {
  const c = await startConsumer(...args);
  consumers.push(c);
  return c;
}

async function subscribe(tenantId: string, url: string, events: string[] = ["offering.created"]) {
  return dashboardCaller(tenantId).webhooks.createSubscription({ url, events: events as never });
}

const offering = { title: "Villa", price: 1500.5, price_currency: "USD" };
const WORKER = { pollIntervalMs: 100 };

beforeAll(async () => {
  await openDatabase();
  await startEmbeddedWorker(WORKER);
});

/**
 * Stops the worker, which waits for its attempts in flight to be sent and recorded, and starts it
 * again: every request the worker had begun has reached its consumer by then, and whatever it
 * would send later is a pending row with a due time (asserted on by the caller).
 */
async function drainWorker() {
  await stopEmbeddedWorker();
  await openDatabase();
  await startEmbeddedWorker(WORKER);
}
afterAll(async () => {
  await stopEmbeddedWorker();
  for (const c of consumers) await c.close();
});

describe("embedded delivery engine", () => {
  it("delivers on the first try with signatures that verify over the raw bytes only, with a stock Standard Webhooks verifier", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = await consumer(200);
    const sub = await subscribe(tenantId, c.url());
    const created = await call("POST", "/offerings", { key, body: offering });
    expect(created.status).toBe(201);
    await c.waitFor(1);
    const [req] = c.received;

    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["x-event-type"]).toBe("offering.created");
    expect(req.body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      event: "offering.created",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      tenant_id: tenantId,
      data: { object: created.body },
    });
    const expected = createHmac("sha256", sub.secret).update(req.raw).digest("hex");
    expect(req.headers["x-webhook-signature"]).toBe(expected);
    const reserialized = createHmac("sha256", sub.secret)
      .update(JSON.stringify(req.body, null, 1))
      .digest("hex");
    expect(reserialized).not.toBe(req.headers["x-webhook-signature"]);

    // Standard Webhooks: a stock verifier, given the secret exactly as shown and no options.
    const headers = req.headers as Record<string, string>;
    expect(headers["webhook-id"]).toBe(req.body.id);
    expect(new Webhook(sub.secret).verify(req.raw.toString("utf8"), headers)).toEqual(req.body);
    expect(() => new Webhook(sub.secret).verify(JSON.stringify(req.body, null, 1), headers)).toThrow();
    // …keyed with the decoded part after `whsec_`, not the secret string's bytes.
    expect(() => new Webhook(sub.secret, { format: "raw" }).verify(req.raw.toString("utf8"), headers)).toThrow();

    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(tenantId);
      return list[0]?.status === "delivered" ? list : null;
    });
    expect(delivery).toMatchObject({
      subscription_id: sub.id,
      event_id: req.body.id,
      status: "delivered",
      cycle: 1,
      attempt_count: 1,
      last_status_code: 200,
      response_body: "answer 200",
    });
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({
      id: req.headers["x-delivery-id"],
      cycle: 1,
      attempt_number: 1,
      outcome: "delivered",
      status_code: 200,
      error: null,
    });
  });

  it("fails permanently on a 4xx after exactly one attempt", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = await consumer(410);
    await subscribe(tenantId, c.url());
    await call("POST", "/offerings", { key, body: offering });
    await c.waitFor(1);
    const delivery = await eventually(async () => (await deliveriesOf(tenantId)).find((d) => d.status === "permanent_fail"));
    // No retry is scheduled (not pending, no due time) and nothing is in flight: no second request can come.
    expect(delivery).toMatchObject({ status: "permanent_fail", attempt_count: 1, last_status_code: 410, response_body: "answer 410", next_attempt_at: null });
    await drainWorker();
    expect(c.received).toHaveLength(1);
    expect((await deliveriesOf(tenantId))[0].attempts).toHaveLength(1);
  });

  it("climbs the whole ladder on 503 with the configured delays, dead-letters, notifies, and replays as a new cycle", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = await consumer(503);
    await subscribe(tenantId, c.url());
    await call("POST", "/offerings", { key, body: offering });
    await c.waitFor(6, 15_000);
    const dead = await eventually(async () => (await deliveriesOf(tenantId)).find((d) => d.status === "dead_letter"));
    expect(dead.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome, a.status_code])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [1, n, "retry", 503]));
    // Each attempt starts its ladder delay after the previous one ended (never early, little late).
    for (let n = 1; n < 6; n++) {
      const prev = dead.attempts[n - 1];
      const gap = Date.parse(dead.attempts[n].created_at) - (Date.parse(prev.created_at) + prev.duration_ms);
      expect(gap).toBeGreaterThanOrEqual(DELAYS[n] - 5);
      expect(gap).toBeLessThan(DELAYS[n] + 300); // slack for a loaded CI machine
    }
    expect(dead.response_body).toBe("answer 503");
    const notes = await dashboardCaller(tenantId, "admin").webhooks.listNotifications({});
    expect(notes.data).toHaveLength(1);
    expect(notes.data[0]).toMatchObject({ kind: "webhook.dead_letter", data: { delivery_id: dead.id, event_id: dead.event_id, cycle: 1 } });

    c.setBehaviour(200);
    const replayed = await dashboardCaller(tenantId).webhooks.replayDelivery({ id: dead.id });
    expect(replayed).toMatchObject({ status: "pending", cycle: 2, attempt_count: 0 });
    await c.waitFor(7);
    const done = await eventually(async () => (await deliveriesOf(tenantId)).find((d) => d.status === "delivered"));
    expect(done.attempts).toHaveLength(7);
    expect(done.attempts[6]).toMatchObject({ cycle: 2, attempt_number: 1, outcome: "delivered" });
    expect(c.received[6].body.id).toBe(c.received[0].body.id);
    const db = (await openDatabase()).prisma;
    const audit = await db.auditLog.findMany({ where: { tenantId, action: "delivery.replayed" } });
    expect(audit).toHaveLength(1);
    // Resending a delivered one (any state may be resent) is covered in endpoint_page_dashboard.test.ts.
  });

  it("retries a hanging consumer (timeout) and a reset connection (network error)", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = await consumer((_req, i) => (i === 0 ? "hang" : i === 1 ? "reset" : 200));
    await subscribe(tenantId, c.url());
    await call("POST", "/offerings", { key, body: offering });
    const done = await eventually(async () => (await deliveriesOf(tenantId)).find((d) => d.status === "delivered"));
    expect(done.attempts.map((a) => a.outcome)).toEqual(["retry", "retry", "delivered"]);
    expect(done.attempts[0]).toMatchObject({ status_code: null, error: "timeout: no complete response within 1500 ms" });
    expect(done.attempts[0].duration_ms).toBeGreaterThanOrEqual(1495);
    expect(done.attempts[1]).toMatchObject({ status_code: null, error: expect.stringMatching(/^network error: (ECONNRESET|socket hang up)/) });
    expect(new Set(c.received.map((r) => r.headers["x-delivery-id"])).size).toBe(3);
  });

  it("never delivers an event whose transaction rolled back, even with the worker woken meanwhile", async () => {
    const { tenantId } = await tenantWithKey();
    const c = await consumer(200);
    await subscribe(tenantId, c.url(), ["csat.received"]);
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    // A sentinel event of another tenant, committed while the transaction below is open: once it
    // arrives, the worker has claimed at least once with the uncommitted delivery in the table.
    const other = await tenantWithKey();
    await subscribe(other.tenantId, c.url("/sentinel"), ["csat.received"]);
    const csat = () => ({
      object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 4, comment: null, created_at: new Date().toISOString() },
    });
    await expect(
      db.$transaction(async (tx) => {
        await emitEvent(tx, "csat.received", csat());
        // On PGlite every other query (the worker's claim too) queues behind this transaction.
        if (databaseKind() === "postgres") {
          await scopeToTenant((await openDatabase()).prisma, other.tenantId).$transaction((otx) => emitEvent(otx, "csat.received", csat()));
          await c.waitFor(1);
        }
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await db.$transaction((tx) => emitEvent(tx, "csat.received", csat()));
    const sentinels = databaseKind() === "postgres" ? 1 : 0;
    await c.waitFor(sentinels + 1);
    expect(await db.event.count({})).toBe(1);
    expect(await deliveriesOf(tenantId)).toHaveLength(1); // the rolled-back event left no delivery to send later
    await drainWorker();
    expect(c.received.filter((r) => r.path === "/hook")).toHaveLength(1);
    expect(c.received).toHaveLength(sentinels + 1);
  });

  it("sends each subscription only its own events, never another tenant's", async () => {
    const a = await tenantWithKey();
    const b = await tenantWithKey();
    const c = await consumer(200);
    const createdOnly = await subscribe(a.tenantId, c.url("/a-created"), ["offering.created"]);
    const both = await subscribe(a.tenantId, c.url("/a-both"), ["offering.created", "offering.updated"]);
    await subscribe(b.tenantId, c.url("/b-updated"), ["offering.updated"]);

    const created = await call("POST", "/offerings", { key: a.key, body: offering });
    await call("PATCH", `/offerings/${created.body.id}`, { key: a.key, body: { title: "Villa 2" } });
    await c.waitFor(3);
    // Every delivery row is recorded (none pending) and nothing is in flight: no further request can come.
    await eventually(async () => {
      const rows = await deliveriesOf(a.tenantId);
      return rows.length === 3 && rows.every((d) => d.status === "delivered");
    });
    await drainWorker();
    const got = c.received.map((r) => `${r.path} ${r.body.event} ${r.body.tenant_id === a.tenantId ? "A" : "B"}`).sort();
    expect(got).toEqual(["/a-both offering.created A", "/a-both offering.updated A", "/a-created offering.created A"]);
    expect((await deliveriesOf(a.tenantId, createdOnly.id)).map((d) => d.event_type)).toEqual(["offering.created"]);
    expect((await deliveriesOf(a.tenantId, both.id)).map((d) => d.event_type).sort()).toEqual(["offering.created", "offering.updated"]);
    expect(await deliveriesOf(b.tenantId)).toEqual([]);
  });
});
