// `npm start` (scripts/start.mjs) on a fresh embedded database: the server is the compiled bundle,
// run in that one process; the database is created (and the demo tenant seeded, its key printed
// once) by a short-lived child that has exited by the time the server answers; a restart reuses
// the database and prints no key. Needs a Next build (start.mjs would otherwise build one).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { hasNextBuild, ROOT } from "../helpers/http-mounts";

type Started = { proc: ChildProcess; url: string; output: () => string };

async function npmStart(dataDir: string): Promise<Started> {
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

describe.skipIf(!hasNextBuild())("npm start", () => {
  let running: Started | undefined;
  afterEach(async () => {
    await stop(running);
    running = undefined;
  });

  it("first_start_creates_the_embedded_database_in_a_child_then_serves_compiled_in_one_process; restart_prints_no_key", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "tdp-npm-start-"));
    running = await npmStart(dataDir);
    const [key, ...more] = demoKeys(running.output());
    expect(key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(more).toEqual([]);
    expect(existsSync(path.join(dataDir, "pglite", "PG_VERSION"))).toBe(true);
    // The compiled server, at least as new as every server source, and no helper process left running.
    const bundle = path.join(ROOT, "dist/server/main.mjs");
    const newestSource = Math.max(
      ...readdirSync(path.join(ROOT, "server"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(path.join(e.parentPath, e.name)).mtimeMs),
    );
    expect(statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(newestSource);
    expect(childrenOf(running.proc.pid!)).toEqual([]);

    const list = await fetch(`${running.url}/api/v1/offerings?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    expect((await list.json()).data).toHaveLength(1);
    await stop(running);

    running = await npmStart(dataDir);
    expect(demoKeys(running.output())).toEqual([]);
    const again = await fetch(`${running.url}/api/v1/offerings?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
  }, 300_000);
});
