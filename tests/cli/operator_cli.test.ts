// The operator CLI as an operator runs it: a separate process, JSON on stdout.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";

type Run = { code: number; stdout: string; stderr: string; json: any };

/** Runs the CLI against this test run's PostgreSQL, or its own embedded database directory. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], {
      env: { ...process.env, SKIP_MIGRATIONS: process.env.DATABASE_URL ? "1" : "0", LOG_LEVEL: "silent", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}

// With the embedded database the CLI gets a directory of its own (this worker holds its own).
const cliEnv = process.env.DATABASE_URL ? {} : { DATA_DIR: mkdtempSync(path.join(tmpdir(), "tdp-cli-")) };

describe("npm run cli", () => {
  it("tenant_create_key_create_list_revoke_print_json", { timeout: 300_000 }, async () => {
    const tenant = await cli(["tenant", "create", "--name", "CLI tenant"], cliEnv);
    expect(tenant.code).toBe(0);
    expect(tenant.json).toEqual({ id: expect.any(String), name: "CLI tenant", slug: expect.stringMatching(/^cli-tenant-/), created_at: expect.any(String) });

    const key = await cli(["key", "create", "--tenant", tenant.json.id, "--name", "sync", "--scopes", "read,offerings:write"], cliEnv);
    expect(key.code).toBe(0);
    expect(Object.keys(key.json).sort()).toEqual(["id", "key", "prefix", "scopes", "tenant_id"]);
    expect(key.json.key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(key.json.prefix).toBe(key.json.key.slice(0, 22));
    expect(key.json.scopes).toEqual(["read", "offerings:write"]);
    expect(key.json.tenant_id).toBe(tenant.json.id);

    if (process.env.DATABASE_URL) {
      // Same database as this process: the key works on the API right away.
      expect((await call("GET", "/offerings", { key: key.json.key })).status).toBe(200);
    }

    const list = await cli(["key", "list", "--tenant", tenant.json.id], cliEnv);
    expect(list.code).toBe(0);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0]).toMatchObject({ id: key.json.id, prefix: key.json.prefix, last4: key.json.key.slice(-4), revoked_at: null });
    expect(list.stdout).not.toContain(key.json.key);

    const revoked = await cli(["key", "revoke", key.json.id], cliEnv);
    expect(revoked.code).toBe(0);
    expect(revoked.json.revoked_at).toEqual(expect.any(String));
    if (process.env.DATABASE_URL) expect((await call("GET", "/offerings", { key: key.json.key })).status).toBe(401);
    const again = await cli(["key", "revoke", key.json.id], cliEnv);
    expect(again.json.revoked_at).toBe(revoked.json.revoked_at);
  });

  it("at_LOG_LEVEL_info_log_lines_go_to_stderr_and_stdout_is_the_command_s_json_alone", { timeout: 300_000 }, async () => {
    const tenant = await cli(["tenant", "create", "--name", "CLI logs"], { ...cliEnv, LOG_LEVEL: "info" });
    expect(tenant.code).toBe(0);
    const deleted = await cli(["tenant", "delete", tenant.json.id, "--now"], { ...cliEnv, LOG_LEVEL: "info" });
    expect({ code: deleted.code, json: deleted.json }).toMatchObject({ code: 0, json: { id: tenant.json.id, status: "deleted" } });
    expect(deleted.stdout).toBe(`${JSON.stringify(deleted.json)}\n`);
    // Every stderr line is a JSON log line; the deletion's among them.
    const lines = deleted.stderr
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.msg === "tenant deleted")).toEqual([
      { level: "info", time: expect.any(String), tenant_id: tenant.json.id, rows: expect.any(Number), msg: "tenant deleted" },
    ]);
  });

  it("usage_errors_exit_2_with_a_plain_line_and_the_usage_on_stderr", async () => {
    const bad = await cli(["key", "create", "--tenant", "nope", "--name", "x", "--scopes", "read"], cliEnv);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toBe("error: --tenant must be a uuid\nUsage: npm run cli -- key create --tenant TENANT_ID --name NAME --scopes SCOPE[,SCOPE…]\n");
    const scopes = await cli(["key", "create", "--tenant", "00000000-0000-4000-8000-000000000000", "--name", "x", "--scopes", "read,admin"], cliEnv);
    expect(scopes.code).toBe(2);
    expect(scopes.stderr).toMatch(/^error: --scopes must be a comma list of: read, /);
    const longName = await cli(["tenant", "create", "--name", "n".repeat(101)], cliEnv);
    expect(longName.code).toBe(2);
    expect(longName.stderr.split("\n")[0]).toBe("error: --name must be at most 100 characters");
  });

  it("embedded_database_held_by_another_process_is_refused_with_instructions", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tdp-lock-"));
    mkdirSync(dir, { recursive: true });
    // A live process (this test runner) holds the lock.
    writeFileSync(path.join(dir, "pglite.lock"), String(process.pid));
    const res = await cli(["tenant", "create", "--name", "x"], { DATABASE_URL: undefined, DATA_DIR: dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: .*\n$/);
    const message = res.stderr;
    expect(message).toContain(`in use by process ${process.pid}`);
    expect(message).toContain("set DATABASE_URL");
  });
});
