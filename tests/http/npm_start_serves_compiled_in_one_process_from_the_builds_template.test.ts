// `npm start` (scripts/start.mjs) on a fresh embedded database: the server is the compiled bundle,
// run in that one process. The database starts as a copy of the build's migrated template
// (dist/embedded-template) and the server answers at once; the demo tenant is seeded behind it, its
// key printed once when done (a SIGTERM meanwhile lets the seeding finish). Without a template, a
// short-lived child creates the database and seeds it before the server answers. A restart reuses
// the database and prints no key. Needs a Next build (start.mjs would otherwise build one).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { requireNextBuild, ROOT } from "../helpers/http-mounts";

requireNextBuild();

type Started = { proc: ChildProcess; url: string; output: () => string };

async function npmStart(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: "production",
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG_LEVEL: "warn",
    ...extraEnv,
  };
  const proc = spawn(process.execPath, [path.join(ROOT, "scripts/start.mjs")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const deadline = Date.now() + 150_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`npm start exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`npm start not ready: ${out}`);
    try {
      await fetch(`${url}/api/v1`, { signal: AbortSignal.timeout(2_000) });
      return { proc, url, output: () => out };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function stop(s: Started | undefined) {
  if (!s || s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once("exit", r));
  s.proc.kill("SIGTERM");
  await exited;
}

/** Live child processes of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]?.split(" ")[1] === String(pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const demoKeys = (out: string) => [...out.matchAll(/Demo API key \(shown once\): (\S+)/g)].map((m) => m[1]);
/** The demo key, once the seeding behind the ready server has printed it. */
const printedDemoKey = (s: Started) =>
  vi.waitFor(
    () => {
      const [key] = demoKeys(s.output());
      if (!key) throw new Error(`no demo key printed yet:\n${s.output()}`);
      return key;
    },
    { timeout: 90_000, interval: 50 },
  );

/** PostgreSQL's system identifier (the first 8 bytes of global/pg_control): a copy keeps its template's, an initdb makes a new one. */
const systemIdentifier = (pgData: string) =>
  readFileSync(path.join(pgData, "global", "pg_control"))
    .subarray(0, 8)
    .toString("hex");
const TEMPLATE = path.join(ROOT, "dist", "embedded-template");

const get = (s: Started, key: string, p: string) => fetch(`${s.url}/api/v1${p}`, { headers: { authorization: `Bearer ${key}` } });

describe("npm start", () => {
  let running: Started | undefined;
  afterEach(async () => {
    await stop(running);
    running = undefined;
  });

  it("first_start_copies_the_builds_template_serves_in_one_process_and_prints_the_demo_key_once_seeded; restart_prints_no_key", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "tdp-npm-start-"));
    running = await npmStart(dataDir);
    const key = await printedDemoKey(running);
    expect(key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(demoKeys(running.output())).toEqual([key]);
    // start.mjs built the template if it was missing; the database is its copy, not a new initdb.
    expect(systemIdentifier(path.join(dataDir, "pglite"))).toBe(systemIdentifier(TEMPLATE));
    // The compiled server, at least as new as every server source, and no helper process left running.
    const bundle = path.join(ROOT, "dist/server/main.mjs");
    const newestSource = Math.max(
      ...readdirSync(path.join(ROOT, "server"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(path.join(e.parentPath, e.name)).mtimeMs),
    );
    expect(statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(newestSource);
    expect(childrenOf(running.proc.pid!)).toEqual([]);

    const list = await get(running, key, "/offerings?limit=1");
    expect(list.status).toBe(200);
    expect((await list.json()).data).toHaveLength(1);
    await stop(running);

    running = await npmStart(dataDir);
    expect(demoKeys(running.output())).toEqual([]);
    const again = await get(running, key, "/offerings?limit=1");
    expect(again.status).toBe(200);
  }, 300_000);

  it("without_a_template_a_child_creates_and_seeds_the_database_before_the_server_answers", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "tdp-npm-start-no-template-"));
    running = await npmStart(dataDir, { EMBEDDED_DB_TEMPLATE: path.join(dataDir, "no-template") });
    const [key, ...more] = demoKeys(running.output()); // printed by the child, before the first answer
    expect(key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(more).toEqual([]);
    expect(systemIdentifier(path.join(dataDir, "pglite"))).not.toBe(systemIdentifier(TEMPLATE));
    expect(childrenOf(running.proc.pid!)).toEqual([]);
    expect((await get(running, key, "/offerings?limit=1")).status).toBe(200);
  }, 300_000);

  it("sigterm_while_the_demo_tenant_is_seeded_finishes_the_seeding_then_exits_0", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "tdp-npm-start-sigterm-"));
    running = await npmStart(dataDir);
    const exited = new Promise<number | null>((resolve) => running!.proc.once("exit", resolve));
    running.proc.kill("SIGTERM"); // at the first answer: the demo week's traffic takes seconds more
    expect(await exited).toBe(0);
    const [key, ...more] = demoKeys(running.output());
    expect(key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(more).toEqual([]);

    running = await npmStart(dataDir);
    expect(demoKeys(running.output())).toEqual([]);
    const rollup = await get(running, key, "/analytics/weekly-rollup?days=7");
    expect(rollup.status).toBe(200);
    // The whole week, as a seeding left alone writes it (tests/demo/demo_week_comes_through_the_receivers.test.ts).
    expect((await rollup.json()).totals.conversations.by_channel).toEqual({ voice: 11, sms: 4, whatsapp: 4, webchat: 1, email: 1 });
  }, 300_000);
});
