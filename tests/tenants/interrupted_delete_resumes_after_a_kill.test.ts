// The operator CLI as a real process: a `tenant delete --now` killed (SIGKILL) halfway leaves the
// tenant due, and running it again deletes exactly the rest (batches shrink below
// RETENTION_PURGE_BATCH on a busy machine, so what is left is no multiple of it); a retention period past
// the operator's bound exits 2 naming the flag. PostgreSQL only (two processes on one database).
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { newTenant } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

function cli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], {
    env: { ...process.env, SKIP_MIGRATIONS: "1", LOG_LEVEL: "silent", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

const MESSAGES = 4_000;

describe.skipIf(!process.env.DATABASE_URL)("tenant delete in a real process", () => {
  it("killed_mid_deletion_then_run_again_deletes_every_row", { timeout: 240_000 }, async () => {
    const tenant = await newTenant("Killed deletion");
    const db = await getDb();
    const conversation = await makeConversation(tenant.id);
    await db.message.createMany({
      data: Array.from({ length: MESSAGES }, (_, i) => ({
        tenantId: tenant.id,
        conversationId: conversation.id,
        direction: "inbound",
        author: "customer",
        body: `m${i}`,
        status: "received",
      })),
    });
    const count = () => db.message.count({ where: { tenantId: tenant.id } });

    // Small batches with pauses: the deletion takes seconds, and is killed while it deletes messages.
    const first = cli(["tenant", "delete", tenant.id, "--now"], { RETENTION_PURGE_BATCH: "100", RETENTION_PURGE_PAUSE_MS: "50" });
    await expect.poll(count, { timeout: 60_000, interval: 20 }).toBeLessThan(MESSAGES - 300);
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    const left = await count();
    expect(left).toBeGreaterThan(0);
    expect(await db.tenant.findUnique({ where: { id: tenant.id }, select: { deleteAfter: true } })).toEqual({ deleteAfter: expect.any(Date) });

    const second = await cli(["tenant", "delete", tenant.id, "--now"]).done;
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ id: tenant.id, status: "deleted", deleted: { messages: left, conversations: 1 } });
    expect(await count()).toBe(0);
    expect(await db.tenant.count({ where: { id: tenant.id } })).toBe(0);
    expect(await db.event.count({ where: { tenantId: tenant.id } })).toBe(0);
  });

  it("a_retention_period_past_the_bound_exits_2_naming_the_flag", { timeout: 60_000 }, async () => {
    const tenant = await newTenant("CLI bounds");
    const run = await cli(["tenant", "retention", tenant.id, "--messages-days", "400"]).done;
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toBe(
      "error: --messages-days: messages must be a whole number of days from 1 to 365, the operator's bound (RETENTION_MESSAGES_DAYS); got 400",
    );
    const list = await cli(["tenant", "list"]).done;
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).find((t: { id: string }) => t.id === tenant.id)).toMatchObject({
      status: "active",
      api_keys: 0,
      webhook_endpoints: { enabled: 0, disabled: 0 },
      rows: {},
    });
  });
});
