// Webhook throughput against a physical limit. 4,000 deliveries already due (400 events to 10
// subscriptions at 1,000/s each, one local keep-alive receiver), then a second process delivers
// them: the embedded worker with its default settings ("ours"), or a bare loop that claims due rows
// with SKIP LOCKED, signs them and POSTs them over keep-alive ("physical", scripts/bench/webhook-drainer.ts).
// Rounds alternate, after a round that warms each process up; each reports deliveries/s from "go"
// to the last arrival. Target: ours ≥ 0.6 × physical.
//   DATABASE_URL=postgresql://… npx tsx scripts/bench/webhook-throughput.ts
import { type ChildProcess, fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

/** CPU ms per delivery while draining: the draining process, its database backends, the receiver (this process). */
export type DrainCpu = { drainer: number; database: number; receiver: number };

export type WebhookThroughputBench = {
  database: string;
  deliveries: number;
  rounds: { ours_per_s: number; physical_per_s: number; ours_cpu_ms?: DrainCpu; physical_cpu_ms?: DrainCpu }[];
  ours_per_s_median: number;
  physical_per_s_median: number;
  ratio: number;
  target_met: boolean;
  duplicates: number;
};

/** How many measured backlogs' worth of deliveries each side drains first, unmeasured (see the warm-up round). */
const WARM_UP_BACKLOGS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A process's CPU time so far in ms (user + system, from /proc: Linux only), 0 when it is gone. */
function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in ticks of 10 ms (USER_HZ 100)
  } catch {
    return 0;
  }
}
const here = path.dirname(fileURLToPath(import.meta.url));

export async function benchWebhookThroughput(opts: { events?: number; rounds?: number } = {}): Promise<WebhookThroughputBench> {
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
  process.env.LOG_LEVEL ??= "silent";
  const { openDatabase, closeDatabase } = await import("../../server/db/database");
  const { databaseKind } = await import("../../server/db/location");
  if (databaseKind() !== "postgres") throw new Error("the throughput bench needs PostgreSQL (two processes)");
  const { scopeToTenant } = await import("../../server/db/tenant-scope");
  const { createTenant } = await import("../../server/tenants/tenants");
  const { OPERATOR } = await import("../../server/audit/record-audit");
  const { emitEvent } = await import("../../server/events/emit-any-event");
  const { createSubscription } = await import("../../server/webhooks/webhooks.service");

  const SUBSCRIPTIONS = 10;
  const events = opts.events ?? 400;
  const total = events * SUBSCRIPTIONS;
  let received = 0;
  let duplicates = 0;
  const seen = new Set<string>();
  let onReceived: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const key = `${req.url} ${req.headers["webhook-id"]}`;
      if (seen.has(key)) duplicates++;
      seen.add(key);
      received++;
      onReceived?.();
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const tenants: string[] = [];

  const backlog = async (eventCount = events) => {
    // Every drain meets the same database: the rounds before are deleted and vacuumed away. Left in
    // place, each round's tenant, subscriptions and rows stay (the claim looks at every subscription),
    // and a later round measured against more leftovers than an earlier one.
    for (const id of tenants.splice(0)) await (await openDatabase()).prisma.tenant.delete({ where: { id } });
    await openDatabase();
    const tenant = await createTenant({ name: `bench throughput ${randomUUID().slice(0, 8)}` });
    tenants.push(tenant.id);
    const db = scopeToTenant((await openDatabase()).prisma, tenant.id);
    // One receiver; a path per subscription so duplicates are told apart.
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      await createSubscription(db, { url: `${base}/${i}`, events: ["csat.received"], max_deliveries_per_second: 1000 }, OPERATOR);
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < eventCount) {
          await db.$transaction(async (tx) => {
            const object = { id: randomUUID(), conversation_id: randomUUID(), score: 5, comment: null, created_at: new Date().toISOString() };
            await emitEvent(tx, "csat.received", { object });
          });
        }
      }),
    );
    // Fresh statistics for both drains alike: a database that was empty a moment ago has none, and
    // the claim's plan (unlike the bare loop's single index walk) depends on them.
    await (await openDatabase()).prisma.$executeRawUnsafe("VACUUM ANALYZE webhook_deliveries, webhook_attempts, webhook_subscriptions, events");
  };

  // Where the CPU goes (same-machine PostgreSQL only): the client backends serving this database, by pid
  // (not autovacuum, whose runs come and go with the load).
  const measureCpu = existsSync("/proc/self/stat");
  const backendCpu = async () => {
    const db = (await openDatabase()).prisma;
    const rows = await db.$queryRawUnsafe<{ pid: number }[]>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'",
    );
    return new Map(rows.map((r) => [r.pid, cpuMsOf(r.pid)]));
  };

  type Mode = "ours" | "physical";
  /** One drainer process per mode for the whole run (see webhook-drainer.ts); ready once set up. */
  const startDrainer = async (mode: Mode) => {
    const child = fork(path.join(here, "webhook-drainer.ts"), [mode], {
      execArgv: ["--import", "tsx", ...(process.env.BENCH_WEBHOOK_PROFILE === mode ? ["--cpu-prof", "--cpu-prof-dir=bench-results/profiles"] : [])],
      env: { ...process.env, WEBHOOK_ENGINE: "embedded", LOG_LEVEL: "silent", WEBHOOK_ALLOW_LOOPBACK: "1" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`drainer (${mode}) exited ${code} before it was ready`)));
    });
    return child;
  };
  const drainers = new Map<Mode, ChildProcess>();

  /** The newest backlog drained by `mode`'s process: deliveries/s from "go" to the last arrival, and CPU per delivery. */
  const drain = async (mode: Mode, deliveries = total): Promise<{ perSecond: number; cpu?: DrainCpu }> => {
    let child = drainers.get(mode);
    if (!child) drainers.set(mode, (child = await startDrainer(mode)));
    const start = received;
    const cpuBefore = measureCpu ? { drainer: cpuMsOf(child.pid ?? 0), database: await backendCpu(), receiver: process.cpuUsage() } : undefined;
    const t0 = performance.now();
    child.send({ go: tenants.at(-1) });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${mode}: only ${received - start} of ${deliveries} deliveries arrived in 120 s`)), 120_000);
      const check = () => {
        if (received - start < deliveries) return;
        clearTimeout(timer);
        onReceived = undefined;
        resolve();
      };
      onReceived = check;
      check();
    });
    const perSecond = Math.round(deliveries / ((performance.now() - t0) / 1000));
    const cpuAfter = measureCpu
      ? { drainer: cpuMsOf(child.pid ?? 0), database: await backendCpu(), receiver: process.cpuUsage(cpuBefore!.receiver) }
      : undefined;
    // Paused before the next backlog is written: it must be all due when the next drain starts.
    const paused = new Promise((resolve) => child.once("message", resolve));
    child.send("pause");
    await paused;
    if (!cpuBefore || !cpuAfter) return { perSecond };
    let database = 0;
    for (const [pid, ms] of cpuAfter.database) database += ms - (cpuBefore.database.get(pid) ?? 0);
    const perDelivery = (ms: number) => Math.round((ms / deliveries) * 1000) / 1000;
    return {
      perSecond,
      cpu: {
        drainer: perDelivery(cpuAfter.drainer - cpuBefore.drainer),
        database: perDelivery(database),
        receiver: perDelivery((cpuAfter.receiver.user + cpuAfter.receiver.system) / 1000),
      },
    };
  };

  try {
    // A round to warm each process up (its code compiled, its connections open), not counted: measured
    // cold, the worker spent about 40% of its CPU in V8's optimizing compiler (perf). Three backlogs'
    // worth (12,000 deliveries) each: after one (4,000), V8's optimizing compiler still took about 16%
    // of the worker's CPU in the first measured round (perf), and its CPU per delivery kept falling
    // round after round; a server's worker runs with its code long compiled.
    for (const mode of ["ours", "physical"] as const) {
      await backlog(events * WARM_UP_BACKLOGS);
      await drain(mode, total * WARM_UP_BACKLOGS);
    }
    const rounds: WebhookThroughputBench["rounds"] = [];
    for (let i = 0; i < (opts.rounds ?? 2); i++) {
      await backlog();
      const ours = await drain("ours");
      await backlog();
      const physical = await drain("physical");
      rounds.push({ ours_per_s: ours.perSecond, physical_per_s: physical.perSecond, ours_cpu_ms: ours.cpu, physical_cpu_ms: physical.cpu });
    }
    const oursMedian = median(rounds.map((r) => r.ours_per_s));
    const physicalMedian = median(rounds.map((r) => r.physical_per_s));
    const ratio = Math.round((oursMedian / physicalMedian) * 100) / 100;
    return {
      database: databaseKind(),
      deliveries: total,
      rounds,
      ours_per_s_median: oursMedian,
      physical_per_s_median: physicalMedian,
      ratio,
      target_met: ratio >= 0.6,
      duplicates,
    };
  } finally {
    for (const child of drainers.values()) {
      const exited = new Promise((r) => child.once("exit", r));
      child.send("stop");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      child.kill("SIGKILL");
    }
    server.closeAllConnections();
    server.close();
    const db = (await openDatabase()).prisma;
    for (const id of tenants) await db.tenant.delete({ where: { id } }).catch(() => {});
    await closeDatabase();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await benchWebhookThroughput({ rounds: Number(process.env.ROUNDS ?? 2) });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
