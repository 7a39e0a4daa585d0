// Retention bench: the purge of a large messages table while API writes go on.
//   One tenant holds BENCH_RETENTION_ROWS old messages (default 1,000,000, 300 days old, in 1,000
//   conversations); another tenant writes through the production lean front at a fixed rate
//   (POST /api/v1/conversations/{id}/send, which inserts into the same messages table), each request
//   timed from when it was due (open loop). The old tenant's message retention is set to 30 days
//   and `retention purge --tenant` runs in a process of its own (default batch and pause), started
//   for each slice "with" and killed at its end, to interleave BENCH_RETENTION_ROUNDS rounds (default
//   6) of a BENCH_RETENTION_SECONDS slice (default 6) without the purge and one with it, in ABBA
//   order (a shared machine's load drifts; interleaving spreads it):
//   (a) the writes' p50 / p99 without the purge and with it, pooled, and the median over rounds of
//       each round's ratio (target: p99 <= 1.5x without), with each slice's numbers and load average;
//   (b) how long the purge took to finish once left running (rows/s), and the old tenant's
//       analytics message totals before and after (they must be equal: the counters survive it).
//   BENCH_RETENTION_JOB=delete runs `tenant delete --now` of the old tenant instead of the purge (the
//   same slices: writes of another tenant while a large tenant is deleted in batches; no analytics
//   check, the old tenant's counters go with it).
//   DATABASE_URL=postgresql://… npx tsx scripts/bench/retention.ts      (or BENCH_PARTS=retention npm run bench)
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { freePort, spawnServer, type Running } from "./services";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 1_000_000);
const RATE = Number(process.env.BENCH_RETENTION_RATE ?? 25);
const SECONDS = Number(process.env.BENCH_RETENTION_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_RETENTION_ROUNDS ?? 6);
const CONVERSATIONS = 1_000;
const WRITER_CONVERSATIONS = 50;
const TARGET_RATIO = 1.5;
/** What runs beside the writes: the retention purge (default) or the deletion of the old tenant. */
const JOB = process.env.BENCH_RETENTION_JOB === "delete" ? "delete" : "purge";

const log = (msg: string) => console.error(`[bench:retention] ${msg}`);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

type Seeded = { oldTenant: string; key: string; conversations: string[] };

/** The two tenants: the old one's messages inserted in SQL (one statement per 100,000), the writer's key and conversations. */
async function seed(databaseUrl: string): Promise<Seeded> {
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { applyMigrations } = await import("../../server/db/schema-engine");
  await applyMigrations(new PrismaPg({ connectionString: databaseUrl }));
  process.env.DATABASE_URL = databaseUrl;
  process.env.SKIP_MIGRATIONS = "1";
  const [{ openDatabase, closeDatabase }, { scopeToTenant }, { issueApiKey }, { OPERATOR }, { createConversation }] = await Promise.all([
    import("../../server/db/database"),
    import("../../server/db/tenant-scope"),
    import("../../server/auth/api-keys"),
    import("../../server/audit/record-audit"),
    import("../../server/conversations/conversations.service"),
  ]);
  const db = (await openDatabase()).prisma;
  await db.tenant.deleteMany({ where: { slug: { in: ["bench-retention-old", "bench-retention-writer"] } } });
  const old = await db.tenant.create({ data: { name: "Retention bench (old data)", slug: "bench-retention-old" } });
  const writer = await db.tenant.create({ data: { name: "Retention bench (writer)", slug: "bench-retention-writer" } });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO conversations (id, tenant_id, channel, customer_identifier, created_at, updated_at, last_activity_at)
       SELECT gen_random_uuid(), $1::uuid, 'sms', '+9715' || lpad(i::text, 8, '0'), now() - interval '300 days', now() - interval '300 days', now() - interval '300 days'
       FROM generate_series(1, ${CONVERSATIONS}) i`,
      [old.id],
    );
    const { rows } = await client.query<{ id: string }>(`SELECT id FROM conversations WHERE tenant_id = $1 ORDER BY id`, [old.id]);
    const ids = rows.map((r) => r.id);
    for (let from = 0; from < ROWS; from += 100_000) {
      const n = Math.min(100_000, ROWS - from);
      await client.query(
        `INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, created_at)
         SELECT gen_random_uuid(), $1::uuid, ($2::uuid[])[1 + (i % ${CONVERSATIONS})], CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
           CASE WHEN i % 2 = 0 THEN 'customer' ELSE 'assistant' END, 'Hello, is the villa in Jumeirah still available next week? ' || i, 'received',
           now() - interval '300 days' - make_interval(secs => i)
         FROM generate_series($3::int, $4::int) i`,
        [old.id, ids, from + 1, from + n],
      );
      log(`seeded ${from + n} old messages`);
    }
    await client.query("VACUUM ANALYZE messages");
  } finally {
    await client.end();
  }
  const scoped = scopeToTenant(db, writer.id);
  const { plaintext } = await issueApiKey(scoped, { name: "bench", scopes: ["conversations:write", "read"] }, OPERATOR);
  const conversations: string[] = [];
  for (let i = 0; i < WRITER_CONVERSATIONS; i++) {
    const { conversation } = await createConversation(scoped, { channel: "webchat", customer_identifier: `bench-visitor-${i}` });
    conversations.push(conversation.id);
  }
  await closeDatabase();
  return { oldTenant: old.id, key: plaintext, conversations };
}

/** The first body of each non-2xx status seen (what a 503 said, in the report). */
const errorBodies = new Map<number, string>();

function send(server: Running, agent: Agent, key: string, conversationId: string, n: number): Promise<number> {
  const url = new URL(`/api/v1/conversations/${conversationId}/send`, server.url);
  const body = JSON.stringify({ body: `Your viewing is confirmed for tomorrow (${n})` });
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && !errorBodies.has(status)) errorBodies.set(status, Buffer.concat(chunks).toString().slice(0, 300));
          resolve(status);
        });
      },
    );
    req.once("error", () => resolve(0));
    req.end(body);
  });
}

/** `RATE` writes a second for `seconds`, evenly spaced, each timed from when it was due. */
async function pacedWrites(server: Running, seeded: Seeded, seconds: number, pooled: number[] = []) {
  const latencies: number[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const statuses = new Map<number, number>();
  const sends: Promise<void>[] = [];
  const total = RATE * seconds;
  const start = performance.now() + 50;
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sends.push(
      send(server, agent, seeded.key, seeded.conversations[n % seeded.conversations.length], n).then((status) => {
        latencies.push(performance.now() - due);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    );
  }
  await Promise.all(sends);
  agent.destroy();
  pooled.push(...latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    sent: latencies.length,
    statuses: Object.fromEntries(statuses),
    p50Ms: round(percentile(sorted, 50), 1),
    p99Ms: round(percentile(sorted, 99), 1),
    maxMs: round(sorted.at(-1) ?? Number.NaN, 1),
  };
}

export async function benchRetention(ctx: { databaseUrl?: string } = {}) {
  const databaseUrl = ctx.databaseUrl ?? process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("the retention bench needs DATABASE_URL (PostgreSQL)");
  log(`seeding ${ROWS} old messages`);
  const t0 = Date.now();
  const seeded = await seed(databaseUrl);
  log(`seeded in ${round((Date.now() - t0) / 1000, 1)} s`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const count = async () => Number((await client.query(`SELECT count(*) AS n FROM messages WHERE tenant_id = $1`, [seeded.oldTenant])).rows[0].n);
  // Rows deleted from messages so far (only the purge deletes there), from the statistics: no work
  // for the database, but approximate (flushed by each backend within a second or so).
  const deletes = async () => {
    await client.query("SELECT pg_stat_clear_snapshot()");
    return Number((await client.query(`SELECT n_tup_del AS n FROM pg_stat_user_tables WHERE relname = 'messages'`)).rows[0].n);
  };
  const totals = async () =>
    (
      await client.query(`SELECT metric, sum(count)::int AS n FROM analytics_daily_counts WHERE tenant_id = $1 GROUP BY metric ORDER BY metric`, [
        seeded.oldTenant,
      ])
    ).rows;
  const server = await spawnServer("retention bench front", ["--import", "tsx", path.join(root, "scripts/bench/ingest-server.ts")], {
    port: await freePort(),
    cwd: root,
    readyPath: "/api/v1",
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SKIP_MIGRATIONS: "1",
      LOG_LEVEL: "warn",
      NODE_ENV: "production",
      RATE_LIMIT_DISABLED: "1",
      REDIS_URL: undefined,
      WEBHOOK_ENGINE: "off",
      SEND_RECOVERY_INTERVAL_MS: "0",
      SLA_CHECK_INTERVAL_MS: "0",
      // The purge runs in a process of its own here, which the bench pauses and continues.
      RETENTION_PURGE_INTERVAL_MS: "0",
    },
  });
  try {
    const totalsBefore = await totals();
    log("warm-up 5 s");
    await pacedWrites(server, seeded, 5);
    await client.query(`UPDATE tenants SET retention_messages_days = 30 WHERE id = $1`, [seeded.oldTenant]);
    // A purge process of its own (the CLI's `retention purge --tenant`); the bench's slices "with" run
    // while one deletes, and it is killed at the slice's end (SIGKILL mid-batch: that batch rolls
    // back, the next process continues from what is left).
    let purges = 0;
    const startPurge = async () => {
      // Its connections carry a name of their own, so the bench sees when this process (not the
      // one killed before it, whose statistics may still arrive) has sent its first batch.
      const name = `retention-bench-purge-${++purges}`;
      const command = JOB === "purge" ? ["retention", "purge", "--tenant", seeded.oldTenant] : ["tenant", "delete", seeded.oldTenant, "--now"];
      const proc = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts/cli.ts"), ...command], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: databaseUrl, SKIP_MIGRATIONS: "1", LOG_LEVEL: "warn", PGAPPNAME: name },
        stdio: "ignore",
      });
      const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
      const started = async () =>
        (await client.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE '%DELETE FROM%messages%'`, [name])).rowCount! > 0;
      while (!(await started()) && proc.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      return { proc, exited };
    };
    const without: number[] = [];
    const withPurge: number[] = [];
    const slices: { round: number; mode: string; p50Ms: number; p99Ms: number; deletedApprox: number; loadavg1m: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // ABBA: the order alternates by round, so a load that drifts up or down over the run does not
      // favour either mode.
      const order = r % 2 === 0 ? (["without", "with"] as const) : (["with", "without"] as const);
      for (const mode of order) {
        const purge = mode === "with" ? await startPurge() : null;
        const before = await deletes();
        const slice = await pacedWrites(server, seeded, SECONDS, mode === "with" ? withPurge : without);
        const deletedApprox = (await deletes()) - before;
        if (purge) {
          purge.proc.kill("SIGKILL");
          await purge.exited;
        }
        slices.push({ round: r + 1, mode, p50Ms: slice.p50Ms, p99Ms: slice.p99Ms, deletedApprox, loadavg1m: round(loadavg()[0], 2) });
        log(`round ${r + 1} ${mode} the purge: ${JSON.stringify(slices.at(-1))}`);
      }
    }
    const leftAfterRounds = await count();
    const runStart = Date.now();
    const last = await startPurge();
    await last.exited;
    const purgeSeconds = (Date.now() - runStart) / 1000;
    const totalsAfter = await totals();
    const summary = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return {
        writes: xs.length,
        p50Ms: round(percentile(sorted, 50), 1),
        p99Ms: round(percentile(sorted, 99), 1),
        maxMs: round(sorted.at(-1) ?? Number.NaN, 1),
      };
    };
    const a = summary(without);
    const b = summary(withPurge);
    const ratio = round(b.p99Ms / a.p99Ms, 2);
    // Per round, the slice with the purge against the one without (next to it in time): the median
    // of those ratios is what a burst of outside load in one slice moves least.
    const median = (xs: number[]) => {
      const sorted = [...xs].sort((x, y) => x - y);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2, 2);
    };
    const roundRatios = (key: "p50Ms" | "p99Ms") =>
      Array.from({ length: ROUNDS }, (_, r) => {
        const of = (mode: string) => slices.find((s) => s.round === r + 1 && s.mode === mode)!;
        return round(of("with")[key] / of("without")[key], 2);
      });
    return {
      job: JOB,
      rows: ROWS,
      rate: RATE,
      rounds: ROUNDS,
      sliceSeconds: SECONDS,
      withoutPurge: a,
      withPurge: b,
      p99Ratio: ratio,
      p50Ratio: round(b.p50Ms / a.p50Ms, 2),
      perRoundP99Ratios: roundRatios("p99Ms"),
      medianRoundP99Ratio: median(roundRatios("p99Ms")),
      perRoundP50Ratios: roundRatios("p50Ms"),
      medianRoundP50Ratio: median(roundRatios("p50Ms")),
      target: `p99 with the purge <= ${TARGET_RATIO}x without`,
      met: ratio <= TARGET_RATIO,
      slices,
      purge: {
        rowsLeftAfterRounds: leftAfterRounds,
        secondsToFinish: round(purgeSeconds, 1),
        rowsPerSecond: Math.round(leftAfterRounds / purgeSeconds),
        left: await count(),
      },
      errors: Object.fromEntries(errorBodies),
      // A deleted tenant's counters go with it: the check is the purge's.
      analyticsTotalsUnchanged: JOB === "purge" ? JSON.stringify(totalsBefore) === JSON.stringify(totalsAfter) : null,
      tenantLeft: Number((await client.query(`SELECT count(*) AS n FROM tenants WHERE id = $1`, [seeded.oldTenant])).rows[0].n),
      analyticsTotals: totalsAfter,
      loadavg: loadavg().map((x) => round(x, 2)),
    };
  } finally {
    await server.stop();
    await client.end();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  benchRetention()
    .then((r) => {
      console.log(JSON.stringify(r, null, 2));
      process.exit(0);
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
