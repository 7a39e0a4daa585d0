// The README runs as written: its ```sh blocks, in order, in one fresh bash (`set -euo pipefail`),
// from a directory that looks like a fresh checkout of this one (every file of the checkout
// linked in, not its .data/), on an embedded database of its own and a free port. Blocks
// after a `<!-- readme-test: skip … -->` line are left out (the install, the suite itself,
// placeholders). The blocks start `npm start`, capture the demo key and address from its output,
// call the API, generate the typed client's types, run the example, use the CLI beside the server
// and stop it. Needs the production build (`npm run build`), as `npm start` does; skipped without one.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { requireNextBuild, ROOT } from "../helpers/http-mounts";

requireNextBuild();

/** The README's shell blocks, in order, without the skipped ones. */
function readmeShellBlocks(readme: string): { skipped: boolean; code: string }[] {
  const blocks: { skipped: boolean; code: string }[] = [];
  const pattern = /(<!-- readme-test: skip[^>]*-->\s*\n)?```sh\n([\s\S]*?)```/g;
  for (const match of readme.matchAll(pattern)) blocks.push({ skipped: !!match[1], code: match[2] });
  return blocks;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe("README", () => {
  it("marks_what_it_leaves_out_and_runs_the_rest", () => {
    const blocks = readmeShellBlocks(readFileSync(path.join(ROOT, "README.md"), "utf8"));
    expect(blocks.filter((b) => b.skipped).map((b) => b.code.split("\n")[0])).toContain("npm install && npm start");
    const run = blocks.filter((b) => !b.skipped).map((b) => b.code);
    expect(run.join("")).toContain('curl -H "Authorization: Bearer $DEMO_KEY"');
    expect(run.join("")).not.toMatch(/^npm install/m);
  });

  let workDir: string | undefined;
  afterAll(() => {
    // A server the blocks left running (a failed run) is stopped by the pid in its lock.
    const lock = workDir && path.join(workDir, "data", "pglite.lock");
    if (lock && existsSync(lock)) {
      const pid = Number(readFileSync(lock, "utf8").split("\n")[0]);
      if (pid) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
  });

  it("its_shell_blocks_run_in_order_against_a_started_server", { timeout: 600_000 }, async () => {
    const blocks = readmeShellBlocks(readFileSync(path.join(ROOT, "README.md"), "utf8")).filter((b) => !b.skipped);
    workDir = mkdtempSync(path.join(tmpdir(), "tdp-readme-"));
    // The checkout's files, linked; not its state (the embedded database, a start.log of a run by hand).
    for (const entry of readdirSync(ROOT)) {
      if (![".data", "start.log", ".git"].includes(entry)) symlinkSync(path.join(ROOT, entry), path.join(workDir, entry));
    }
    mkdirSync(path.join(workDir, "data"));
    const port = await freePort();
    // A fresh shell's environment: no NODE_ENV, no DATABASE_URL or REDIS_URL (the embedded defaults).
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: path.join(workDir, "data"),
      PORT: String(port),
      HOST: "127.0.0.1",
    };
    const script = `set -euo pipefail\n${blocks.map((b) => b.code).join("\n")}`;
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn("bash", ["-c", script], { cwd: workDir, env: env as unknown as NodeJS.ProcessEnv });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code) => resolve({ code, out }));
    });
    const log = existsSync(path.join(workDir, "start.log")) ? readFileSync(path.join(workDir, "start.log"), "utf8") : "";
    expect(result.code, `${result.out}\n--- start.log ---\n${log}`).toBe(0);
    expect(result.out).toContain('"has_more"'); // the curl's list envelope
    expect(result.out).toMatch(/\{"data":\[\{"id":/); // the CLI's key list beside the server: the demo key
    // No warning at `npm start` on the defaults: no log line at warn or error, no npm or Node warning.
    const warnings = log.split("\n").filter((line) => /^\{"level":"(warn|error)"/.test(line) || (!line.startsWith("{") && /\bwarn(ing)?\b/i.test(line)));
    expect(warnings).toEqual([]);
  });
});
