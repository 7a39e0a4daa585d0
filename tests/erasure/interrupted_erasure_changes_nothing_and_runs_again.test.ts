// An erasure interrupted mid-way (its CLI process fails while it waits on a row of the customer's
// events that another connection holds, after it has redacted their conversations and messages)
// leaves nothing changed: it is one transaction. Run again, it erases everything and emits its one event. PostgreSQL only (a
// second process, and a lock held by another connection).
import { spawn } from "node:child_process";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { eraseCustomer } from "../../server/erasure/erasure.service";
import { OPERATOR } from "../../server/audit/record-audit";
import { tenantWithKey } from "../helpers/api";
import { eventually } from "../helpers/webhook-consumer";
import { tenantDb } from "../helpers/conversations";
import { findAnywhere, seedCustomer, uniqueCustomer } from "./seed-customer";

describe.skipIf(!process.env.DATABASE_URL)("an interrupted erasure", () => {
  it("interrupted_mid_transaction_it_changes_nothing_and_a_second_run_erases_everything", { timeout: 120_000 }, async () => {
    const t = await tenantWithKey();
    const customer = uniqueCustomer();
    const seeded = await seedCustomer(t.tenantId, t.key, customer);
    const db = (await openDatabase()).prisma;
    const before = await findAnywhere([customer.phone, customer.email, customer.name]);

    // Another connection holds a row lock on one of the customer's events: the erasure stops there.
    const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await blocker.connect();
    await blocker.query("BEGIN");
    const event = await db.event.findFirstOrThrow({ where: { tenantId: t.tenantId, type: "lead.created" } });
    await blocker.query("SELECT id FROM events WHERE id = $1 FOR UPDATE", [event.id]);

    // The erasure (a CLI process) reaches the locked event after redacting the conversations and
    // messages in its transaction, waits, and fails when its query timeout passes: interrupted mid-way.
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", "customer", "erase", "--tenant", t.tenantId, "--identifier", customer.phone], {
      env: { ...process.env, SKIP_MIGRATIONS: "1", LOG_LEVEL: "silent", DATABASE_QUERY_TIMEOUT_MS: "2000" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    await blocker.query("ROLLBACK");
    await blocker.end();
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: failed: Database error. Code: `57014`. Message: `canceling statement due to statement timeout`\n/);

    // Nothing changed: the failed transaction rolled back.
    await eventually(
      async () => (await db.conversation.count({ where: { id: { in: seeded.conversationIds }, customerIdentifier: { startsWith: "erased:" } } })) === 0,
    );
    expect(await findAnywhere([customer.phone, customer.email, customer.name])).toEqual(before);
    expect(await db.event.count({ where: { tenantId: t.tenantId, type: "customer.erased" } })).toBe(0);

    // Run again: all of it, once.
    const result = await eraseCustomer(await tenantDb(t.tenantId), { customer_identifier: customer.phone }, OPERATOR);
    expect(result.status).toBe("erased");
    expect(new Set(result.conversation_ids)).toEqual(new Set(seeded.conversationIds));
    expect(await findAnywhere([customer.phone, customer.email, customer.name])).toEqual([]);
    expect(await db.event.count({ where: { tenantId: t.tenantId, type: "customer.erased" } })).toBe(1);
  });
});
