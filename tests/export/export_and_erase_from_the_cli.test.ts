// The operator CLI as an operator runs it (a separate process against this run's PostgreSQL; the
// embedded database allows one process, so PGlite skips): `tenant export` to stdout prints the JSON
// lines and nothing else, to a file prints `{ file, counts }`; `customer erase` erases by identifier
// and answers usage errors with exit code 2 naming the flag.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { tenantWithKey } from "../helpers/api";
import { seedCustomer, uniqueCustomer } from "../erasure/seed-customer";

type Run = { code: number; stdout: string; stderr: string };

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], {
      env: { ...process.env, SKIP_MIGRATIONS: "1", LOG_LEVEL: "silent" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe.skipIf(!process.env.DATABASE_URL)("export and erasure from the operator CLI", () => {
  it("tenant_export_to_stdout_and_to_a_file_and_customer_erase", { timeout: 180_000 }, async () => {
    const t = await tenantWithKey();
    const customer = uniqueCustomer();
    await seedCustomer(t.tenantId, t.key, customer);

    const toStdout = await cli(["tenant", "export", "--tenant", t.tenantId]);
    expect(toStdout.code).toBe(0);
    const lines = toStdout.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ resource: "export", data: { tenant_id: t.tenantId } });
    expect(lines.at(-1).resource).toBe("export_end");
    const messages = await (await openDatabase()).prisma.message.count({ where: { tenantId: t.tenantId } });
    expect(lines.filter((l) => l.resource === "messages")).toHaveLength(messages);
    expect(toStdout.stdout).toContain(customer.email);

    const file = path.join(mkdtempSync(path.join(tmpdir(), "cli-export-")), "t.jsonl");
    const toFile = await cli(["tenant", "export", "--tenant", t.tenantId, "--out", file]);
    expect(toFile.code).toBe(0);
    // The same rows, and the first export's own audit entry.
    const counts = lines.at(-1).data.counts;
    expect(JSON.parse(toFile.stdout)).toEqual({ file, counts: { ...counts, audit_logs: counts.audit_logs + 1 } });
    expect(readFileSync(file, "utf8").split("\n").filter(Boolean)).toHaveLength(lines.length + 1);
    const again = await cli(["tenant", "export", "--tenant", t.tenantId, "--out", file]);
    expect(again.code).toBe(2);
    expect(again.stderr.split("\n")[0]).toBe(`error: --out: ${file} already exists`);

    const bad = await cli(["customer", "erase", "--tenant", t.tenantId, "--identifier", "not a phone"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toMatch(/^error: .*--identifier/);
    const neither = await cli(["customer", "erase", "--tenant", t.tenantId]);
    expect(neither.code).toBe(2);
    expect(neither.stderr.split("\n")[0]).toBe("error: give exactly one of --identifier or --conversation");

    const erased = await cli(["customer", "erase", "--tenant", t.tenantId, "--identifier", customer.email]);
    expect(erased.code).toBe(0);
    expect(JSON.parse(erased.stdout)).toMatchObject({ status: "erased", event_id: expect.stringMatching(/^evt_/) });
    const after = await cli(["tenant", "export", "--tenant", t.tenantId]);
    for (const value of [customer.email, customer.name, customer.phone]) expect(after.stdout).not.toContain(value);
    const audit = await (await openDatabase()).prisma.auditLog.findFirstOrThrow({ where: { tenantId: t.tenantId, action: "customer.erased" } });
    expect(audit).toMatchObject({ actorType: "operator", actorLabel: "cli" });
  });
});
