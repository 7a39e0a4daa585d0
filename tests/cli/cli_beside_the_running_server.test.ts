// The operator CLI beside a running server on the embedded database (PGlite allows one process):
// the server (`npm start`'s entry, here from source) takes the CLI's commands on its operator socket,
// so a key the CLI issues works at once on the server's API; with the server stopped the CLI opens
// the database itself again. Also its help and exit codes (0 done, 1 failed, 2 usage), errors as
// plain lines on stderr (exit 1, a failure, is in operator_cli.test.ts). Real processes throughout; embedded database only (on PostgreSQL every
// process opens the database itself).
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type Run = { code: number; stdout: string; stderr: string };

function run(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { env: { ...process.env, LOG_LEVEL: "silent", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe.skipIf(!!process.env.DATABASE_URL)("the CLI beside `npm start` on the embedded database", () => {
  let dataDir: string;
  let port: number;
  let server: ChildProcess;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "tdp-beside-"));
    // The run's migrated template when there is one (a fresh directory is created and migrated by the server otherwise).
    if (process.env.TDP_PGLITE_TEMPLATE && existsSync(process.env.TDP_PGLITE_TEMPLATE)) cpSync(process.env.TDP_PGLITE_TEMPLATE, dataDir, { recursive: true });
    port = await freePort();
    env = { DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir, SKIP_MIGRATIONS: undefined };
    server = spawn(process.execPath, ["--import", "tsx", "server/http/main.ts"], {
      env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1", DEMO_SEED: "0", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    server.stderr!.on("data", (d) => (out += d));
    await new Promise<void>((resolve, reject) => {
      server.stdout!.on("data", (d) => {
        out += d;
        if (out.includes("Ready on")) resolve();
      });
      server.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
    });
  }, 240_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill("SIGKILL");
      await new Promise((resolve) => server.once("exit", resolve));
    }
  });

  it("commands_run_in_the_running_server_and_a_key_they_issue_works_on_its_api_at_once", { timeout: 120_000 }, async () => {
    expect(readFileSync(path.join(dataDir, "pglite.lock"), "utf8")).toBe(`${server.pid}\nsocket ${path.join(dataDir, "cli.sock")}\n`);
    const tenant = await run(["tenant", "create", "--name", "Beside the server"], env);
    expect(tenant).toMatchObject({ code: 0, stderr: "" });
    const tenantId = JSON.parse(tenant.stdout).id;
    const key = await run(["key", "create", "--tenant", tenantId, "--name", "deploy", "--scopes", "read,webhooks:write"], env);
    expect(key).toMatchObject({ code: 0, stderr: "" });
    const plaintext = JSON.parse(key.stdout).key;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/webhook-endpoints`, { headers: { authorization: `Bearer ${plaintext}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  it("usage_errors_exit_2_with_plain_lines_on_stderr_also_through_the_server", { timeout: 120_000 }, async () => {
    const bad = await run(["key", "create", "--tenant", "nope", "--name", "x", "--scopes", "read"], env);
    expect(bad).toEqual({
      code: 2,
      stdout: "",
      stderr: "error: --tenant must be a uuid\nUsage: npm run cli -- key create --tenant TENANT_ID --name NAME --scopes SCOPE[,SCOPE…]\n",
    });
    const unknown = await run(["frobnicate", "now"], env);
    expect(unknown).toEqual({
      code: 2,
      stdout: "",
      stderr: "error: unknown command 'frobnicate now'\nRun 'npm run cli -- --help' for the list of commands.\n",
    });
    const tenantId = JSON.parse((await run(["tenant", "create", "--name", "Failing"], env)).stdout).id;
    // A refused value is the command line's fault too (2), said in plain words, with the command's usage.
    const refused = await run(["webhook", "create", "--tenant", tenantId, "--url", "https://10.1.2.3/hook", "--events", "lead.created"], env);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    const [message, usage, ...rest] = refused.stderr.split("\n");
    expect(message).toMatch(/^error: invalid field 'url': host 10\.1\.2\.3 is a private address; /);
    expect(usage).toMatch(/^Usage: npm run cli -- webhook create --tenant TENANT_ID --url URL/);
    expect(rest).toEqual([""]);
  });

  it("help_prints_usage_on_stdout_and_exits_0", { timeout: 120_000 }, async () => {
    const all = await run(["--help"], env);
    expect(all.code).toBe(0);
    expect(all.stderr).toBe("");
    expect(all.stdout).toMatch(/^Usage: npm run cli -- <group> <action>/);
    for (const command of ["tenant create --name NAME", "key create --tenant TENANT_ID", "webhook roll-secret ENDPOINT_ID", "channel move"]) {
      expect(all.stdout).toContain(`  ${command}`);
    }
    const one = await run(["webhook", "roll-secret", "--help"], env);
    expect(one).toEqual({
      code: 0,
      stderr: "",
      stdout:
        "Usage: npm run cli -- webhook roll-secret ENDPOINT_ID [--overlap-seconds N]\n  Prints a new signing secret once; the old one signs beside it for N seconds (default 24 hours).\n",
    });
    const short = await run(["key", "list", "-h"], env);
    expect(short).toEqual({
      code: 0,
      stderr: "",
      stdout: "Usage: npm run cli -- key list --tenant TENANT_ID\n  The tenant's keys (prefix and last 4 characters, never the key).\n",
    });
    const group = await run(["crm", "--help"], env);
    expect(group.code).toBe(0);
    expect(group.stdout.match(/^Usage: /gm)).toHaveLength(3);
    const none = await run([], env);
    expect(none).toEqual({ code: 2, stdout: "", stderr: "error: no command given\nRun 'npm run cli -- --help' for the list of commands.\n" });
  });

  it("with_the_server_stopped_the_cli_opens_the_database_itself_and_sees_what_it_wrote", { timeout: 120_000 }, async () => {
    const tenantId = JSON.parse((await run(["tenant", "create", "--name", "Before the stop"], env)).stdout).id;
    await run(["key", "create", "--tenant", tenantId, "--name", "k", "--scopes", "read"], env);
    server.kill("SIGTERM");
    const code = await new Promise((resolve) => server.once("exit", resolve));
    expect(code).toBe(0);
    expect(existsSync(path.join(dataDir, "pglite.lock"))).toBe(false);
    expect(existsSync(path.join(dataDir, "cli.sock"))).toBe(false);
    const list = await run(["key", "list", "--tenant", tenantId], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).data).toHaveLength(1);
  });
});
