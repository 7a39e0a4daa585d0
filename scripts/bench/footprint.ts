// Footprint of a production server (what `npm start` runs: scripts/start.mjs, the compiled lean
// front in one process): the time from process start to the first answered request, and resident
// memory idle after start, after a throughput run and after a first dashboard page, on PostgreSQL
// and on the embedded default (a first start, which creates the database, and a restart).
// Targets (issue 19): idle <= 200 MB on PostgreSQL, <= 350 MB embedded; ready <= 3 s.
//   DATABASE_URL=postgresql://… npx tsx scripts/bench/footprint.ts      (or BENCH_PARTS=footprint npm run bench)
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./services";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const autocannon = createRequire(import.meta.url)("autocannon") as (
  opts: Record<string, unknown>,
) => Promise<{ requests: { average: number }; non2xx: number }>;
const LIST_PATH = "/api/v1/offerings?limit=20";
const LOAD_SECONDS = Number(process.env.BENCH_FOOTPRINT_LOAD_SECONDS ?? 5);
const SETTLE_MS = 3_000;
/** Node's flags from package.json's `start` (`node <flags> scripts/start.mjs`): the bench runs what `npm start` runs. */
const START_NODE_FLAGS = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start as string).split(" ").slice(1, -1);
const log = (msg: string) => console.error(`[bench:footprint] ${msg}`);

/** Resident memory of a process, MB (Linux /proc). */
function residentMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  return Math.round(kb / 1024);
}

type Started = { proc: ChildProcess; url: string; readyMs: number; output: () => string };

/** Starts `node scripts/start.mjs` and measures until its first answer to an API request (any status). */
async function startServer(env: Record<string, string | undefined>): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...START_NODE_FLAGS, path.join(root, "scripts/start.mjs")], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      WEBHOOK_ENGINE: "off",
      // As a fresh `npm start`: migrations on (the bench turns them off in its own process for its seeding).
      SKIP_MIGRATIONS: undefined,
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      ...env,
      HOST: "127.0.0.1",
      PORT: String(port),
    } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited during startup:\n${out}`);
    if (performance.now() - t0 > 180_000) throw new Error(`server not ready after 180 s:\n${out}`);
    try {
      await fetch(url + LIST_PATH, { signal: AbortSignal.timeout(2_000) });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return { proc, url, readyMs: Math.round(performance.now() - t0), output: () => out };
}

async function stopServer(s: Started) {
  if (s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once("exit", r));
  s.proc.kill("SIGTERM");
  await exited;
}

export type FootprintRun = { readyMs: number; idleMb: number; afterLoadMb: number; reqPerSec: number; afterPageMb: number };

/** One server's life: ready time, idle memory, memory after a throughput run and after a page view. */
async function measure(env: Record<string, string | undefined>, apiKey: (s: Started) => Promise<string>): Promise<FootprintRun> {
  const s = await startServer(env);
  try {
    // Idle is measured once start-up work is over: a first embedded start seeds the demo tenant behind the ready server.
    const key = await apiKey(s);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idleMb = residentMb(s.proc.pid!);
    const load = await autocannon({ url: s.url + LIST_PATH, connections: 50, duration: LOAD_SECONDS, headers: { authorization: `Bearer ${key}` } });
    if (load.non2xx) throw new Error(`${load.non2xx} non-2xx answers under load`);
    const afterLoadMb = residentMb(s.proc.pid!);
    const page = await fetch(s.url + "/sign-in");
    if (page.status !== 200) throw new Error(`/sign-in answered ${page.status}`);
    await page.text();
    const afterPageMb = residentMb(s.proc.pid!);
    return { readyMs: s.readyMs, idleMb, afterLoadMb, reqPerSec: Math.round(load.requests.average), afterPageMb };
  } finally {
    await stopServer(s);
  }
}

/** The demo tenant's key, printed once by a first embedded start when its seeding is done. */
async function demoKey(s: Started): Promise<string> {
  for (const deadline = performance.now() + 60_000; performance.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const key = /Demo API key \(shown once\): (\S+)/.exec(s.output())?.[1];
    if (key) return key;
  }
  throw new Error(`no demo key printed:\n${s.output()}`);
}

export async function benchFootprint(ctx: { databaseUrl?: string; apiKey?: string }) {
  const results: Record<string, FootprintRun> = {};
  if (ctx.databaseUrl && ctx.apiKey) {
    log("PostgreSQL: start, idle, load, page");
    results.postgres = await measure({ DATABASE_URL: ctx.databaseUrl, DEMO_SEED: "0", RATE_LIMIT_DISABLED: "1" }, async () => ctx.apiKey!);
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), "bench-footprint-"));
  let key = "";
  log("embedded: first start (creates the database and the demo tenant)");
  results.embeddedFirstStart = await measure({ DATABASE_URL: undefined, DATA_DIR: dataDir, RATE_LIMIT_DISABLED: "1" }, async (s) => (key = await demoKey(s)));
  log("embedded: restart");
  results.embeddedRestart = await measure({ DATABASE_URL: undefined, DATA_DIR: dataDir, RATE_LIMIT_DISABLED: "1" }, async () => key);
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `footprint ${name.padEnd(19)} ready ${String(r.readyMs).padStart(5)} ms   idle ${r.idleMb} MB   after ${LOAD_SECONDS} s at -c 50 (${r.reqPerSec} req/s) ${r.afterLoadMb} MB   after a page ${r.afterPageMb} MB`,
    );
  }
  console.log("footprint targets: idle <= 200 MB on PostgreSQL, <= 350 MB embedded; ready <= 3000 ms");
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchFootprint({ databaseUrl: process.env.DATABASE_URL, apiKey: process.env.BENCH_API_KEY }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
