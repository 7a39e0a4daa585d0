// Webhook benchmark: event-commit-to-consumer latency (p50/p99) and deliveries per second, with
// 10 subscriptions to a local consumer, embedded engine. Run on PostgreSQL (DATABASE_URL) for the
// numbers that matter:  DATABASE_URL=postgresql://… npx tsx scripts/bench/webhooks.ts
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

export type WebhookBench = {
  database: string;
  subscriptions: number;
  latency_events: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  throughput_deliveries: number;
  deliveries_per_s: number;
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export async function benchWebhooks(opts: { latencyEvents?: number; throughputEvents?: number } = {}): Promise<WebhookBench> {
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
  process.env.LOG_LEVEL ??= "silent";
  const { openDatabase, closeDatabase } = await import("../../server/db/database");
  const { databaseKind } = await import("../../server/db/location");
  const { scopeToTenant } = await import("../../server/db/tenant-scope");
  const { createTenant } = await import("../../server/tenants/tenants");
  const { OPERATOR } = await import("../../server/audit/record-audit");
  const { emitEvent } = await import("../../server/events/emit-any-event");
  const { createSubscription } = await import("../../server/webhooks/webhooks.service");
  const { DeliveryWorker } = await import("../../server/webhooks/embedded-worker");

  const SUBSCRIPTIONS = 10;
  const arrivals = new Map<string, number[]>();
  let received = 0;
  let onReceived: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      const id = JSON.parse(Buffer.concat(chunks).toString("utf8")).id as string;
      let list = arrivals.get(id);
      if (!list) arrivals.set(id, (list = []));
      list.push(at);
      received++;
      onReceived?.();
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  await openDatabase();
  const tenant = await createTenant({ name: `bench webhooks ${randomUUID().slice(0, 8)}` });
  const db = scopeToTenant((await openDatabase()).prisma, tenant.id);
  // The highest rate limit: the bench measures the engine, not the per-subscription limit (default 50/s).
  for (let i = 0; i < SUBSCRIPTIONS; i++) await createSubscription(db, { url, events: ["offering.created"], max_deliveries_per_second: 1000 }, OPERATOR);
  const worker = new DeliveryWorker({ concurrency: 64 });
  await worker.start();

  const now = new Date().toISOString();
  const emit = async () => {
    let eventId = "";
    await db.$transaction(async (tx) => {
      const offering = {
        id: randomUUID(),
        external_id: null,
        reference_number: null,
        title: "Bench offering",
        title_ar: null,
        description: null,
        description_ar: null,
        attributes: {},
        price: "100",
        price_currency: "USD",
        address: null,
        photos: [],
        status: "active",
        available_from: null,
        created_at: now,
        updated_at: now,
      };
      eventId = (await emitEvent(tx, "offering.created", { object: offering })).eventId;
    });
    return { id: `evt_${eventId}`, committedAt: performance.now() };
  };
  const waitForReceived = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${received} of ${count} deliveries arrived`)), 120_000);
      const check = () => received >= count && (clearTimeout(timer), (onReceived = undefined), resolve());
      onReceived = check;
      check();
    });

  try {
    // Warm-up (connections, JIT), not measured.
    for (let i = 0; i < 20; i++) await emit();
    await waitForReceived(20 * SUBSCRIPTIONS);

    // Latency: events one at a time (10 ms apart), each fanned out to 10 subscriptions.
    const latencyEvents = opts.latencyEvents ?? 200;
    const commits: { id: string; committedAt: number }[] = [];
    const base = received;
    for (let i = 0; i < latencyEvents; i++) {
      commits.push(await emit());
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitForReceived(base + latencyEvents * SUBSCRIPTIONS);
    const latencies = commits.flatMap((c) => (arrivals.get(c.id) ?? []).map((at) => at - c.committedAt)).sort((a, b) => a - b);

    // Throughput: a backlog of deliveries (events committed while the worker is stopped), then the
    // time from starting a fresh worker until every delivery arrived.
    const throughputEvents = opts.throughputEvents ?? 300;
    await worker.stop();
    const before = received;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < throughputEvents) await emit();
      }),
    );
    const drainer = new DeliveryWorker({ concurrency: 64 });
    const started = performance.now();
    await drainer.start();
    await waitForReceived(before + throughputEvents * SUBSCRIPTIONS);
    const seconds = (performance.now() - started) / 1000;
    await drainer.stop();

    return {
      database: databaseKind(),
      subscriptions: SUBSCRIPTIONS,
      latency_events: latencyEvents,
      latency_p50_ms: Math.round(percentile(latencies, 50) * 10) / 10,
      latency_p99_ms: Math.round(percentile(latencies, 99) * 10) / 10,
      throughput_deliveries: throughputEvents * SUBSCRIPTIONS,
      deliveries_per_s: Math.round((throughputEvents * SUBSCRIPTIONS) / seconds),
    };
  } finally {
    await worker.stop();
    server.closeAllConnections();
    server.close();
    await (await openDatabase()).prisma.tenant.delete({ where: { id: tenant.id } }).catch(() => {});
    await closeDatabase();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await benchWebhooks();
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
export { benchWebhookIsolation } from "./webhook-isolation";
export { benchWebhookThroughput } from "./webhook-throughput";
