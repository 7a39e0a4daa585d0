// `npm run bench`: one bounded run (a few minutes) measuring GET /api/v1/offerings?limit=20 on real
// PostgreSQL through (1) the physical limit (node:http + one raw pg query), (2) the full stack through
// the lean front, (3) the full stack through Next (`next start`), (4) a bare in-memory route handler;
// the deep-page cost; the rate limiter's added latency; a CPU profile of (2). Prints a table and
// writes bench-results/latest.json. Uses DATABASE_URL / REDIS_URL when set, else starts throwaway ones.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { freePort, processTreeCpuMs, spawnServer, startThrowawayPostgres, startThrowawayRedis } from "./services";
import { summariseProfile, type ProfileSummary } from "./profile-summary";
import { resetSettingsOnEnvChange } from "../../server/lib/settings";
import { buildServer } from "../build-server.mjs";
import { printResults, type Throughput } from "./report";

// The bench points this process at its own database as it goes (settings are read once otherwise).
resetSettingsOnEnvChange();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (opts: Record<string, unknown>) => Promise<any>;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SLICE_S = Number(process.env.BENCH_SLICE ?? 4);
const LIMITER_KEYS = 60;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 200);
/** The limiter's added latency is a fraction of a millisecond in a noisy sum: more samples. */
const LIMITER_SEQUENTIAL = Number(process.env.BENCH_LIMITER_SEQUENTIAL ?? 1000);
const LIST_PATH = "/api/v1/offerings?limit=20";
const OFFERINGS = 50;
const APPOINTMENTS = 100_000;
const DEEP_ROW = 90_000;

/** BENCH_PARTS=throughput,limiter (say) runs only those parts; default: every part. */
/**
 * BENCH_NEXT=0 leaves out (3), `next start`, and so the `next build` it needs: a quick A/B of the
 * lean front against the physical limit while server/ changes (every change would rebuild Next).
 */
const WITH_NEXT = process.env.BENCH_NEXT !== "0";
const PARTS = new Set(
  (process.env.BENCH_PARTS ?? "throughput,deep,limiter,profile,analytics,webhooks,tools,footprint,ingest,metrics").split(",").map((p) => p.trim()),
);

const cleanups: (() => Promise<void>)[] = [];
const step = (msg: string) => console.error(`[bench] ${msg}`);
/**
 * Sub-millisecond latency differences drown in leftover work of the previous part (autovacuum
 * after the seeding, a server's GC after a load run): let the machine settle first.
 */
const settle = () => new Promise((r) => setTimeout(r, Number(process.env.BENCH_SETTLE_MS ?? 5000)));

// ---------- measurement helpers ----------

type Target = { name: string; url: string; headers: Record<string, string>; pid: number };

/**
 * Throughput of several servers, measured in interleaved slices (round-robin, ROUNDS x SLICE_S each)
 * so that load from other processes on a shared machine hits every server alike. Latency is the
 * median over slices of each slice's p50 / p99; CPU is read from /proc around each slice.
 */
async function interleavedThroughput(targets: Target[], pgPid: (() => number) | null): Promise<Record<string, Throughput>> {
  for (const t of targets) await autocannon({ url: t.url, connections: CONNECTIONS, duration: 2, headers: t.headers }); // warm-up
  const acc = new Map(
    targets.map((t) => [t.name, { requests: 0, seconds: 0, p50: [] as number[], p99: [] as number[], non2xx: 0, errors: 0, cpuMs: 0, pgMs: 0 }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const a = acc.get(t.name)!;
      const cpu0 = processTreeCpuMs(t.pid);
      const pg0 = pgPid ? processTreeCpuMs(pgPid()) : 0;
      const r = await autocannon({ url: t.url, connections: CONNECTIONS, duration: SLICE_S, headers: t.headers });
      a.cpuMs += processTreeCpuMs(t.pid) - cpu0;
      if (pgPid) a.pgMs += processTreeCpuMs(pgPid()) - pg0;
      a.requests += r.requests.total;
      a.seconds += r.duration;
      a.p50.push(r.latency.p50);
      a.p99.push(r.latency.p99);
      a.non2xx += r.non2xx;
      a.errors += r.errors + r.timeouts;
    }
  }
  const out: Record<string, Throughput> = {};
  for (const [name, a] of acc) {
    out[name] = {
      reqPerSec: Math.round(a.requests / a.seconds),
      p50: quantile(a.p50, 0.5),
      p99: quantile(a.p99, 0.5),
      non2xx: a.non2xx,
      errors: a.errors,
      requests: a.requests,
      cpuMsPerRequest: round(a.cpuMs / Math.max(a.requests, 1), 3),
      pgCpuMsPerRequest: pgPid ? round(a.pgMs / Math.max(a.requests, 1), 3) : null,
    };
  }
  return out;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One GET; resolves with the elapsed milliseconds (high resolution) and the status. */
function timedGet(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end();
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Sequential requests to two targets, interleaved so drift and noise hit both alike. */
async function interleaved(a: () => Promise<{ ms: number; status: number }>, b: () => Promise<{ ms: number; status: number }>, n: number) {
  for (let i = 0; i < 20; i++) await a(), await b(); // warm-up
  const ta: number[] = [];
  const tb: number[] = [];
  const bad: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = await a();
    const y = await b();
    ta.push(x.ms);
    tb.push(y.ms);
    if (x.status !== 200) bad.push(x.status);
    if (y.status !== 200) bad.push(y.status);
  }
  return {
    a: { median: round(quantile(ta, 0.5), 3), p99: round(quantile(ta, 0.99), 3) },
    b: { median: round(quantile(tb, 0.5), 3), p99: round(quantile(tb, 0.99), 3) },
    non200: bad.length,
  };
}

// ---------- setup ----------

async function setUpDatabase(): Promise<{ url: string; pid: (() => number) | null }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, pid: null };
  step("starting a throwaway PostgreSQL");
  const pgServer = await startThrowawayPostgres();
  cleanups.push(pgServer.stop);
  return { url: pgServer.url, pid: pgServer.pid };
}

async function setUpRedis(): Promise<{ url: string; pid: number | null } | null> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, pid: null };
  if (spawnSync("redis-server", ["--version"]).status !== 0) return null;
  step("starting a throwaway Redis");
  const redis = await startThrowawayRedis();
  cleanups.push(redis.stop);
  return { url: redis.url, pid: redis.pid };
}

type Seed = { tenantId: string; keys: string[]; deepCursor: string; page2Cursor: string };

async function seed(databaseUrl: string): Promise<Seed> {
  step("applying migrations and seeding (100,000 appointments)");
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { applyMigrations } = await import("../../server/db/schema-engine");
  await applyMigrations(new PrismaPg({ connectionString: databaseUrl }));
  process.env.DATABASE_URL = databaseUrl;
  process.env.SKIP_MIGRATIONS = "1";
  const { openDatabase, closeDatabase } = await import("../../server/db/database");
  const { scopeToTenant } = await import("../../server/db/tenant-scope");
  const { createTenant } = await import("../../server/tenants/tenants");
  const { issueApiKey } = await import("../../server/auth/api-keys");
  const { OPERATOR } = await import("../../server/audit/record-audit");
  const { SCOPES } = await import("../../server/auth/principal");

  await openDatabase();
  const tenant = await createTenant({ name: `Bench tenant ${Date.now()}` });
  const db = scopeToTenant((await openDatabase()).prisma, tenant.id);
  const keys: string[] = [];
  // Key 0 for throughput runs (limiter off); the others share the limiter runs so no key nears 200/min.
  for (let i = 0; i <= LIMITER_KEYS; i++) keys.push((await issueApiKey(db, { name: `bench ${i}`, scopes: [...SCOPES] }, OPERATOR)).plaintext);
  await closeDatabase();

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(
    `INSERT INTO offerings (id, tenant_id, title, price, price_currency, attributes, photos, address, status, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'Offering ' || g, (g * 125.5)::numeric, 'USD', jsonb_build_object('rooms', g % 5, 'area_sqm', 40 + g),
            ARRAY['https://example.com/p/' || g || '.jpg'], 'Street ' || g, 'active', now() - g * interval '1 minute', now()
     FROM generate_series(1, ${OFFERINGS}) g`,
    [tenant.id],
  );
  await client.query(
    `INSERT INTO appointments (id, tenant_id, customer_name, customer_phone, scheduled_start, scheduled_end, status, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'Customer ' || g, '+1555' || lpad(g::text, 7, '0'),
            timestamptz '2026-01-01 00:00Z' + g * interval '5 minutes', timestamptz '2026-01-01 00:30Z' + g * interval '5 minutes',
            'confirmed', now(), now()
     FROM generate_series(1, ${APPOINTMENTS}) g`,
    [tenant.id],
  );
  await client.query("ANALYZE offerings; ANALYZE appointments; ANALYZE api_keys");
  const rowAt = async (n: number) =>
    (await client.query(`SELECT id FROM appointments WHERE tenant_id = $1 ORDER BY scheduled_start DESC, id DESC OFFSET ${n - 1} LIMIT 1`, [tenant.id])).rows[0]
      .id as string;
  const deepCursor = await rowAt(DEEP_ROW);
  const page2Cursor = await rowAt(20);
  await client.end();
  return { tenantId: tenant.id, keys, deepCursor, page2Cursor };
}

/** Newest modification time under a directory (source files only). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "generated" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds when there is no build or the sources changed since it: (3) must run today's code. */
function ensureBuild() {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (existsSync(buildId) && statSync(buildId).mtimeMs > Math.max(newestMtime(path.join(root, "server")), newestMtime(path.join(root, "app")))) return;
  step("no .next build, or sources newer than it: running `next build`");
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error("next build failed");
}

// ---------- main ----------

async function main() {
  // The ingest part starts its own receiver and baseline servers: alone, it needs no build or fronts.
  if ([...PARTS].every((part) => part === "ingest")) return ingestOnly();
  // The retention part starts its own lean front on its own seeded tenants: alone, it needs no build.
  if ([...PARTS].every((part) => part === "retention")) return retentionOnly();
  // The tools part needs only the lean front: alone, it skips `next build` and the other servers.
  if ([...PARTS].every((part) => part === "tools")) return toolsOnly();
  // The metrics part starts its own two lean fronts: alone, it needs the seed and the compiled server only.
  if ([...PARTS].every((part) => part === "metrics")) return metricsOnly();
  const t0 = Date.now();
  const results: Record<string, any> = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    settings: { rounds: ROUNDS, sliceS: SLICE_S, connections: CONNECTIONS, sequential: SEQUENTIAL, path: LIST_PATH },
  };
  const database = await setUpDatabase();
  const databaseUrl = database.url;
  const redis = await setUpRedis();
  const redisUrl = redis?.url ?? null;
  if (WITH_NEXT) ensureBuild();
  await buildServer();
  const data = await seed(databaseUrl);
  const auth = { authorization: `Bearer ${data.keys[0]}` };

  const serverEnv = {
    DATABASE_URL: databaseUrl,
    SKIP_MIGRATIONS: "1",
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    REDIS_URL: undefined,
    UPSTASH_REDIS_REST_URL: undefined,
    RATE_LIMIT_DISABLED: "1",
    // The servers only answer API requests here; a worker of theirs must not take the webhook
    // benchmark's deliveries.
    WEBHOOK_ENGINE: "off",
  };
  // (2) is what `npm start` runs: the compiled server (built fresh just above).
  const lean = [path.join(root, "dist/server/main.mjs")];
  const start = async (name: string, args: string[], env: Record<string, string | undefined> = {}, readyPath?: string) => {
    const s = await spawnServer(name, args, { port: await freePort(), env: { ...serverEnv, ...env }, cwd: root, readyPath });
    cleanups.push(s.stop);
    return s;
  };

  step("starting servers: physical limit, lean front (limiter off), lean front (limiter on Redis), next start");
  const [physical, leanFront, leanLimited, nextStart] = await Promise.all([
    start("physical", ["--import", "tsx", path.join(root, "scripts/bench/physical-server.ts")], { BENCH_TENANT_ID: data.tenantId }, LIST_PATH),
    start("lean", lean),
    // Limits raised so one key can carry a load run: the limiter's script does the same work at any limit.
    redisUrl
      ? start("lean+redis", lean, { REDIS_URL: redisUrl, RATE_LIMIT_DISABLED: undefined, RATE_LIMIT_PER_KEY: "1000000", RATE_LIMIT_PER_TENANT: "1000000" })
      : Promise.resolve(null),
    WITH_NEXT ? start("next", [path.join(root, "node_modules/next/dist/bin/next"), "start", "-H", "127.0.0.1"], {}, "/api/v1") : Promise.resolve(null),
  ]);

  // The same page from every front (the bare handler serves the full stack's bytes).
  const leanPage = await timedGet(leanFront.url + LIST_PATH, auth);
  const nextPage = nextStart ? await timedGet(nextStart.url + LIST_PATH, auth) : null;
  const physicalPage = await timedGet(physical.url + LIST_PATH, {});
  if (leanPage.status !== 200) throw new Error(`lean front answered ${leanPage.status}: ${leanPage.body}\n${leanFront.output()}`);
  const bodyFile = path.join(mkdtempSync(path.join(tmpdir(), "bench-body-")), "page.json");
  writeFileSync(bodyFile, leanPage.body);
  const bare = await start("bare", ["--import", "tsx", path.join(root, "scripts/bench/bare-server.ts")], { BENCH_BODY_FILE: bodyFile }, LIST_PATH);
  results.sameAnswer = {
    leanVsNext: nextPage ? nextPage.status === 200 && nextPage.body === leanPage.body : null,
    leanVsPhysical: JSON.stringify(JSON.parse(physicalPage.body)) === JSON.stringify(JSON.parse(leanPage.body)),
    bytes: leanPage.body.length,
  };

  if (PARTS.has("throughput")) await throughputPart();
  async function throughputPart() {
    step(`throughput: ${ROUNDS} interleaved rounds of ${SLICE_S} s per server, -c ${CONNECTIONS}, RATE_LIMIT_DISABLED=1 on the full stacks except (2r)`);
    const runs = await interleavedThroughput(
      [
        { name: "physical", url: physical.url + LIST_PATH, headers: {}, pid: physical.proc.pid! },
        { name: "lean", url: leanFront.url + LIST_PATH, headers: auth, pid: leanFront.proc.pid! },
        ...(nextStart ? [{ name: "next", url: nextStart.url + LIST_PATH, headers: auth, pid: nextStart.proc.pid! }] : []),
        { name: "bare", url: bare.url + LIST_PATH, headers: {}, pid: bare.proc.pid! },
        // Also gives the limited server the same history as (2) before the limiter's latency A/B.
        ...(leanLimited ? [{ name: "leanLimited", url: leanLimited.url + LIST_PATH, headers: auth, pid: leanLimited.proc.pid! }] : []),
      ],
      database.pid,
    );
    results.throughput = runs;
    // Observed req/s depends on what else runs on the machine; CPU per request does much less.
    const cpuRatio = (a: Throughput, b: Throughput) => round(b.cpuMsPerRequest / a.cpuMsPerRequest);
    results.ratios = {
      reqPerSec: {
        leanOverPhysical: round(runs.lean.reqPerSec / runs.physical.reqPerSec),
        leanOverNext: runs.next ? round(runs.lean.reqPerSec / runs.next.reqPerSec) : null,
        leanOverBare: round(runs.lean.reqPerSec / runs.bare.reqPerSec),
      },
      cpuCapacity: {
        leanOverPhysical: cpuRatio(runs.lean, runs.physical),
        leanOverNext: runs.next ? cpuRatio(runs.lean, runs.next) : null,
        leanOverBare: cpuRatio(runs.lean, runs.bare),
      },
    };
  }

  if (PARTS.has("deep")) await deepPart();
  async function deepPart() {
    await settle();
    step(`deep page: ${SEQUENTIAL} sequential requests each, page 1 vs cursor at row ${DEEP_ROW.toLocaleString("en")} of ${APPOINTMENTS.toLocaleString("en")}`);
    const page1 = `${leanFront.url}/api/v1/appointments?limit=20`;
    const deepPage = `${page1}&cursor=${data.deepCursor}`;
    const deep = await interleaved(
      () => timedGet(page1, auth),
      () => timedGet(deepPage, auth),
      SEQUENTIAL,
    );
    // Page 1 runs one query, any cursor page two (the cursor row's lookup, then the page): page 2
    // vs the deep page isolates the cost of depth itself.
    const page2 = `${page1}&cursor=${data.page2Cursor}`;
    const byDepth = await interleaved(
      () => timedGet(page2, auth),
      () => timedGet(deepPage, auth),
      SEQUENTIAL,
    );
    results.deepPage = {
      page1: deep.a,
      deep: deep.b,
      medianRatio: round(deep.b.median / deep.a.median),
      p99Ratio: round(deep.b.p99 / deep.a.p99),
      page2: byDepth.a,
      deepVsPage2: { deep: byDepth.b, medianRatio: round(byDepth.b.median / byDepth.a.median), p99Ratio: round(byDepth.b.p99 / byDepth.a.p99) },
      non200: deep.non200 + byDepth.non200,
    };
  }

  if (PARTS.has("limiter") && leanLimited) {
    await settle();
    step(
      `rate limiter: CPU under load (which also warms both servers alike), then limiter on Redis vs RATE_LIMIT_DISABLED=1, ${LIMITER_SEQUENTIAL} sequential each, interleaved`,
    );
    // Both servers get the same requests: the same rotated keys of one tenant, as many clients would send.
    let k = 0;
    const rotatedKey = () => ({ authorization: `Bearer ${data.keys[1 + (k++ % LIMITER_KEYS)]}` });
    const cpuPerRequest = async (url: string, pid: number) => {
      const load = (duration: number) =>
        autocannon({ url, connections: 10, duration, requests: [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, ...rotatedKey() } }) }] });
      await load(2); // warm-up
      const cpu0 = processTreeCpuMs(pid);
      const redis0 = redis?.pid ? processTreeCpuMs(redis.pid) : 0;
      const r = await load(4);
      return {
        requests: r.requests.total,
        non2xx: r.non2xx,
        appCpuMs: round((processTreeCpuMs(pid) - cpu0) / Math.max(r.requests.total, 1), 3),
        redisCpuMs: redis?.pid ? round((processTreeCpuMs(redis.pid) - redis0) / Math.max(r.requests.total, 1), 3) : null,
      };
    };
    // The load runs first: besides measuring CPU, it warms both servers alike (when the throughput
    // part did not). Comparing a process hot from the earlier parts with an idle one measures JIT
    // warm-up, not the limiter.
    const cpuOff = await cpuPerRequest(leanFront.url + LIST_PATH, leanFront.proc.pid!);
    const cpuOn = await cpuPerRequest(leanLimited.url + LIST_PATH, leanLimited.proc.pid!);
    await settle();
    const lim = await interleaved(
      () => timedGet(leanFront.url + LIST_PATH, rotatedKey()),
      () => timedGet(leanLimited.url + LIST_PATH, rotatedKey()),
      LIMITER_SEQUENTIAL,
    );
    results.rateLimit = {
      disabled: lim.a,
      redis: lim.b,
      addedMedianMs: round(lim.b.median - lim.a.median, 3),
      non200: lim.non200,
      target: "< 0.3 ms",
      cpuUnderLoad: { disabled: cpuOff, redis: cpuOn, addedAppCpuMs: round(cpuOn.appCpuMs - cpuOff.appCpuMs, 3) },
    };
  } else if (PARTS.has("limiter")) {
    results.rateLimit = { skipped: "no redis-server on PATH and no REDIS_URL" };
  }

  if (PARTS.has("profile")) await profilePart();
  async function profilePart() {
    step("CPU profile of the lean front under load (--cpu-prof)");
    const profDir = mkdtempSync(path.join(tmpdir(), "bench-prof-"));
    const profiled = await start("lean (profiled)", ["--cpu-prof", "--cpu-prof-dir", profDir, ...lean]);
    await autocannon({ url: profiled.url + LIST_PATH, connections: CONNECTIONS, duration: 3, headers: auth });
    const windowStartUs = Number(process.hrtime.bigint() / 1000n);
    const profRun = await autocannon({ url: profiled.url + LIST_PATH, connections: CONNECTIONS, duration: 5, headers: auth });
    const windowEndUs = Number(process.hrtime.bigint() / 1000n);
    await profiled.stop();
    const profFile = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
    let profile: ProfileSummary | null = null;
    if (profFile) {
      // V8's profile clock and process.hrtime are both CLOCK_MONOTONIC: keep only the measured window.
      profile = summariseProfile(path.join(profDir, profFile), 15, { fromUs: windowStartUs, toUs: windowEndUs });
      mkdirSync(path.join(root, "bench-results"), { recursive: true });
      results.profile = {
        ...profile,
        requests: profRun.requests.total,
        cpuMsPerRequest: round(profile.busyMs / Math.max(profRun.requests.total, 1), 3),
        file: path.join(profDir, profFile),
      };
    }
  }

  for (const name of ["analytics", "webhooks", "tools", "footprint", "ingest", "metrics"].filter((part) => PARTS.has(part))) {
    const file = path.join(root, "scripts/bench", `${name}.ts`);
    if (!existsSync(file)) {
      results[name] = { skipped: `scripts/bench/${name}.ts does not exist` };
      continue;
    }
    step(`running scripts/bench/${name}.ts`);
    try {
      const mod = (await import(file)) as Record<string, unknown>;
      const fns = Object.entries(mod).filter(([k, v]) => k.startsWith("bench") && typeof v === "function");
      const out: Record<string, unknown> = {};
      for (const [fnName, fn] of fns) {
        out[fnName] = await (fn as (ctx: unknown) => Promise<unknown>)({
          databaseUrl,
          redisUrl,
          tenantId: data.tenantId,
          apiKey: data.keys[0],
          leanUrl: leanFront.url,
          leanPid: leanFront.proc.pid,
          nextUrl: nextStart?.url ?? null,
        });
      }
      results[name] = out;
    } catch (err) {
      results[name] = { error: err instanceof Error ? err.message : String(err) };
    }
  }

  results.elapsedS = Math.round((Date.now() - t0) / 1000);
  printResults(results, {
    rounds: ROUNDS,
    connections: CONNECTIONS,
    sequential: SEQUENTIAL,
    sliceS: SLICE_S,
    listPath: LIST_PATH,
    deepRow: DEEP_ROW,
    appointments: APPOINTMENTS,
    limiterSequential: LIMITER_SEQUENTIAL,
  });
  mkdirSync(path.join(root, "bench-results"), { recursive: true });
  writeFileSync(path.join(root, "bench-results/latest.json"), JSON.stringify(results, null, 2));
  console.log(`\nwritten: bench-results/latest.json (${results.elapsedS} s)`);
}

/** `BENCH_PARTS=retention npm run bench`: the purge of a large table beside API writes (scripts/bench/retention.ts). */
async function retentionOnly() {
  const database = await setUpDatabase();
  step("running scripts/bench/retention.ts");
  const { benchRetention } = await import("./retention");
  const results = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    retention: await benchRetention({ databaseUrl: database.url }),
  };
  console.log(`\nretention: ${JSON.stringify(results.retention, null, 2)}`);
  mkdirSync(path.join(root, "bench-results"), { recursive: true });
  writeFileSync(path.join(root, "bench-results/latest-retention.json"), JSON.stringify(results, null, 2));
  console.log("\nwritten: bench-results/latest-retention.json");
}

/** `BENCH_PARTS=ingest npm run bench`: the ingest part on DATABASE_URL or a throwaway PostgreSQL. */
async function ingestOnly() {
  const database = await setUpDatabase();
  step("running scripts/bench/ingest.ts");
  const { benchIngest } = await import("./ingest");
  const results = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    ingest: await benchIngest({ databaseUrl: database.url }),
  };
  console.log(`\ningest: ${JSON.stringify(results.ingest, null, 2)}`);
  mkdirSync(path.join(root, "bench-results"), { recursive: true });
  writeFileSync(path.join(root, "bench-results/latest-ingest.json"), JSON.stringify(results, null, 2));
  console.log("\nwritten: bench-results/latest-ingest.json");
}

/**
 * `BENCH_PARTS=tools npm run bench`: the tools part through a fresh lean front (`npm start`'s build,
 * limits off). BENCH_TOOL_PROFILE=1 runs that front under --cpu-prof and summarises book_appointment's window.
 */
async function toolsOnly() {
  const database = await setUpDatabase();
  step("applying migrations, building the server");
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { applyMigrations } = await import("../../server/db/schema-engine");
  await applyMigrations(new PrismaPg({ connectionString: database.url }));
  await buildServer();
  const profDir = process.env.BENCH_TOOL_PROFILE === "1" ? mkdtempSync(path.join(tmpdir(), "bench-tools-prof-")) : null;
  const profiling = profDir ? ["--cpu-prof", "--cpu-prof-dir", profDir] : [];
  const lean = await spawnServer("lean", [...profiling, path.join(root, "dist/server/main.mjs")], {
    port: await freePort(),
    cwd: root,
    env: {
      DATABASE_URL: database.url,
      SKIP_MIGRATIONS: "1",
      DEMO_SEED: "0",
      LOG_LEVEL: "warn",
      NODE_ENV: "production",
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      RATE_LIMIT_DISABLED: "1",
      WEBHOOK_ENGINE: "off",
    },
  });
  cleanups.push(lean.stop);
  process.env.SKIP_MIGRATIONS = "1";
  step("running scripts/bench/tools.ts");
  const { benchTools } = await import("./tools");
  const tools = await benchTools({ databaseUrl: database.url, leanUrl: lean.url, leanPid: lean.proc.pid });
  const results: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    tools,
  };
  console.log(`\ntools: ${JSON.stringify(tools, null, 2)}`);
  if (profDir) {
    await lean.stop();
    const profFile = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
    if (profFile) {
      const profile = summariseProfile(path.join(profDir, profFile), 15, tools.book_appointment.window_us);
      results.bookingProfile = { ...profile, file: path.join(profDir, profFile) };
      console.log(`\nbook_appointment CPU profile: ${profile.busyMs} ms busy`);
      for (const c of profile.byComponentSelf.slice(0, 10)) console.log(`  self ${String(c.pct).padStart(5)}%  ${c.component}`);
      for (const f of profile.topFunctions.slice(0, 15)) console.log(`  fn   ${String(f.pct).padStart(5)}%  ${f.fn}`);
    }
  }
  mkdirSync(path.join(root, "bench-results"), { recursive: true });
  writeFileSync(path.join(root, "bench-results/latest-tools.json"), JSON.stringify(results, null, 2));
  console.log("\nwritten: bench-results/latest-tools.json");
}

/** `BENCH_PARTS=metrics npm run bench`: metrics on over off through two fresh lean fronts (`npm start`'s build). */
async function metricsOnly() {
  const database = await setUpDatabase();
  await buildServer();
  const data = await seed(database.url);
  step("running scripts/bench/metrics.ts");
  const { benchMetrics } = await import("./metrics");
  const metrics = await benchMetrics({ databaseUrl: database.url, apiKey: data.keys[0]! });
  const results = { startedAt: new Date().toISOString(), machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version }, metrics };
  console.log(`\nmetrics: ${JSON.stringify(metrics, null, 2)}`);
  mkdirSync(path.join(root, "bench-results"), { recursive: true });
  writeFileSync(path.join(root, "bench-results/latest-metrics.json"), JSON.stringify(results, null, 2));
  console.log("\nwritten: bench-results/latest-metrics.json");
}

main()
  .catch((err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    agent.destroy();
    process.exit();
  });
