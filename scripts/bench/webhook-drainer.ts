// The second process of the webhook throughput bench (scripts/bench/webhook-throughput.ts). Told
// by its parent over IPC: "ours" runs the embedded worker with the default settings (its claim kept
// to the round's tenant, as the loop's is); "physical"
// runs a bare loop, the physical limit the engine is measured against: claim due rows with
// FOR UPDATE SKIP LOCKED (a batch at a time), sign them, POST them over keep-alive to the receiver,
// mark the batch delivered in one statement. Nothing else: no attempt rows, no fairness, no pacing,
// no retries. It sends "ready" once set up; `{ go: tenantId }` starts a drain (of that tenant's
// backlog), "pause" ends it (answered "paused"), "stop" ends the process. One process serves every
// round, the first of which warms it up: a server's worker runs warm, its code long compiled.
//   (spawned as: node --import tsx scripts/bench/webhook-drainer.ts ours|physical)
import http from "node:http";
import pg from "pg";

const mode = process.argv[2];
const send = (m: unknown) => process.send?.(m);

async function physical() {
  const { decryptSecret } = await import("../../server/crypto/secret-box");
  const { signBody, standardWebhookSignature } = await import("../../server/webhooks/signing");
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const secrets = new Map<string, string>();
  // The same in-flight budget as the worker's default concurrency (32): 4 loops of 8.
  const LOOPS = 4;
  const BATCH = 8;
  const post = (url: string, headers: Record<string, string>, body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end(body);
    });
  // Only the round's own tenant: a shared database may hold other due deliveries (sealed with other keys).
  let stopped = true;
  const loop = async (tenant: string) => {
    while (!stopped) {
      const { rows } = await pool.query(
        `WITH due AS (
           SELECT id FROM webhook_deliveries
           WHERE tenant_id = $2::uuid AND status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until <= now())
           ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         UPDATE webhook_deliveries d SET locked_until = now() + interval '30 seconds'
         FROM due, webhook_subscriptions s, events e
         WHERE d.id = due.id AND s.id = d.subscription_id AND e.id = d.event_id
         RETURNING d.id::text AS id, s.target_url, s.secret_encrypted, e.id::text AS event_id, e.type, e.data, e.created_at, e.tenant_id::text AS tenant_id`,
        [BATCH, tenant],
      );
      if (!rows.length) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      await Promise.all(
        rows.map(async (r) => {
          let secret = secrets.get(r.secret_encrypted);
          if (!secret) secrets.set(r.secret_encrypted, (secret = decryptSecret(r.secret_encrypted)));
          const id = `evt_${r.event_id}`;
          const body = JSON.stringify({ id, event: r.type, created_at: r.created_at, tenant_id: r.tenant_id, data: r.data });
          const ts = Math.floor(Date.now() / 1000);
          await post(
            r.target_url,
            {
              "content-type": "application/json",
              "x-webhook-signature": signBody(secret, body),
              "webhook-id": id,
              "webhook-timestamp": String(ts),
              "webhook-signature": standardWebhookSignature(secret, id, ts, body),
            },
            body,
          );
        }),
      );
      await pool.query(
        `UPDATE webhook_deliveries SET status = 'delivered', attempt_count = 1, delivered_at = now(), locked_until = NULL, next_attempt_at = NULL WHERE id = ANY($1::uuid[])`,
        [rows.map((r) => r.id)],
      );
    }
  };
  await pool.query("SELECT 1");
  let loops: Promise<unknown> = Promise.resolve();
  return {
    start(tenant: string) {
      stopped = false;
      loops = Promise.all(Array.from({ length: LOOPS }, () => loop(tenant)));
    },
    async pause() {
      stopped = true;
      await loops;
    },
  };
}

type Message = { go: string } | "pause" | "stop";
if (mode === "physical") {
  const p = await physical();
  // A query before "ready" (in physical()): the pool's first connection is not part of the measurement.
  send("ready");
  process.on("message", async (m: Message) => {
    if (typeof m === "object") p.start(m.go);
    if (m === "pause") {
      await p.pause();
      send("paused");
    }
    if (m === "stop") process.exit(0);
  });
} else {
  const { DeliveryWorker } = await import("../../server/webhooks/embedded-worker");
  const { openDatabase } = await import("../../server/db/database");
  const db = (await openDatabase()).prisma;
  await db.$queryRawUnsafe("SELECT 1");
  // BENCH_WEBHOOK_TIMING=1: time spent per kind of statement, printed on stop (for profiling).
  const timing = new Map<string, { n: number; ms: number }>();
  const timed =
    <F extends (...args: never[]) => Promise<unknown>>(run: F, textOf: (...args: Parameters<F>) => string) =>
    async (...args: Parameters<F>) => {
      const t = performance.now();
      try {
        return await run(...args);
      } finally {
        const key = textOf(...args)
          .trim()
          .slice(0, 60)
          .replace(/\s+/g, " ");
        const e = timing.get(key) ?? { n: 0, ms: 0 };
        e.n++;
        e.ms += performance.now() - t;
        timing.set(key, e);
      }
    };
  let sql = (await openDatabase()).writes;
  let claimRunner = (await openDatabase()).generic;
  if (process.env.BENCH_WEBHOOK_TIMING) {
    const raw = db.$queryRawUnsafe.bind(db);
    (db as { $queryRawUnsafe: unknown }).$queryRawUnsafe = timed(raw, (text: string) => text);
    sql = timed(sql, (statement) => statement.text) as typeof sql;
    claimRunner = timed(claimRunner, (statement) => statement.text) as typeof claimRunner;
  }
  // A worker per drain (the backlog is written while none runs), the process and its compiled code the same.
  let worker: InstanceType<typeof DeliveryWorker> | undefined;
  send("ready");
  process.on("message", async (m: Message) => {
    if (typeof m === "object") {
      // Like the bare loop, only the round's own tenant: a shared database may hold other tenants'
      // due deliveries (the bench's other parts leave some), which the loop would leave alone.
      if (!/^[0-9a-f-]{36}$/.test(m.go)) throw new Error(`not a tenant id: ${m.go}`);
      worker = new DeliveryWorker({ sql, claimRunner, engineFilter: `d.inngest_run_id IS NULL AND d.tenant_id = '${m.go}'` });
      await worker.start();
    }
    if (m === "pause") {
      await worker?.stop(Date.now() + 1_000);
      send("paused");
    }
    if (m === "stop") {
      for (const [k, v] of timing) console.error(`${v.n} × ${(v.ms / v.n).toFixed(2)} ms  ${k}`);
      process.exit(0);
    }
  });
}
