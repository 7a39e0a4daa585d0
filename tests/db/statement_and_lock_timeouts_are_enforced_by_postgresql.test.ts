// PostgreSQL itself bounds the server's statements (statement_timeout, lock_timeout): a statement
// past its bound is cancelled by the server, its transaction rolls back, the request is answered 503
// "busy" (nothing was written: safe to retry) and the breaker stays closed. Directly, the bounds are
// startup parameters of each connection; behind a transaction pooler (TEST_POOLER=pgbouncer, where
// startup parameters do not pass) the role's defaults in its database. Real PostgreSQL and a real
// lean front; a trigger holds offerings titled "Slow insert <seconds>" inside their INSERT.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { DATABASE_BUSY_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { installSlowInsert, offeringIdsTitled } from "../helpers/slow-commit";
import { eventually } from "../helpers/webhook-consumer";

const QUERY_TIMEOUT_MS = 1_500;
const LOCK_TIMEOUT_MS = 500;
const BUSY = { error: { code: "internal_error", message: DATABASE_BUSY_MESSAGE } };

describe.skipIf(!process.env.DATABASE_URL)("statement and lock timeouts enforced by PostgreSQL", () => {
  let server: Running;
  let key: string;
  // Set-up connections go direct: through a pooler they would open server connections before the
  // front has made the bounds the role's defaults.
  const direct = () => process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;

  const bounds = { DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), DATABASE_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) };
  const own: Record<string, string | undefined> = {};

  beforeAll(async () => {
    await installSlowInsert(direct());
    server = await startMount("lean", bounds);
    // Behind a pooler the bounds are the role's defaults, which every process opening the database
    // sets (the last one wins): this test process opens it too, with the same bounds.
    for (const [name, value] of Object.entries(bounds)) {
      own[name] = process.env[name];
      process.env[name] = value;
    }
    ({ key } = await tenantWithKey());
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    for (const [name, value] of Object.entries(own)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const send = async (method: string, path: string, body?: unknown) => {
    const at = Date.now();
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { ms: Date.now() - at, status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
  };

  /** Statements matching `pattern` still running, or last run in a transaction still open. */
  const held = async (pattern: string) => {
    const client = new pg.Client({ connectionString: direct() });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT query FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND query LIKE $1", [
        pattern,
      ]);
      return rows.map((r) => r.query as string);
    } finally {
      await client.end();
    }
  };

  it("a_statement_past_statement_timeout_is_cancelled_by_postgresql_answered_503_busy_nothing_committed_and_nothing_left_running", async () => {
    expect((await send("POST", "/offerings", { title: "Warm", price: "1.00", price_currency: "USD" })).status).toBe(201);
    const answer = await send("POST", "/offerings", { title: "Slow insert 6", price: "1.00", price_currency: "USD" });
    expect([answer.status, answer.retryAfter, answer.body]).toEqual([503, "2", BUSY]);
    // Cancelled by the server at the statement timeout ("busy"; a client giving up would say "unavailable").
    expect(answer.ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 100);
    expect(answer.ms).toBeLessThan(QUERY_TIMEOUT_MS + 2_000);
    // Once nothing holds the INSERT (its rollback may be a moment behind the answer), it can no longer
    // commit: the row's absence then is final. One left to run on would hold it until its 6 s and commit.
    await eventually(async () => (await held("%INSERT INTO%offerings%")).length === 0, 10_000);
    expect(await offeringIdsTitled("Slow insert 6", direct())).toEqual([]);
    // The database is busy, not down: the next request is served.
    expect((await send("GET", "/offerings?limit=1")).status).toBe(200);
    expect(server.output()).not.toMatch(/database unreachable|unhandled error/);
  }, 60_000);

  it("a_row_lock_held_past_lock_timeout_is_answered_503_busy_and_the_update_is_not_applied", async () => {
    const created = await send("POST", "/offerings", { title: "Locked", price: "1.00", price_currency: "USD" });
    expect(created.status).toBe(201);
    const holder = new pg.Client({ connectionString: direct() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM offerings WHERE id = $1 FOR UPDATE", [created.body.id]);
      const answer = await send("PATCH", `/offerings/${created.body.id}`, { title: "Updated while locked" });
      expect([answer.status, answer.retryAfter, answer.body]).toEqual([503, "2", BUSY]);
      expect(answer.ms).toBeLessThan(QUERY_TIMEOUT_MS);
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
    const after = await send("GET", `/offerings/${created.body.id}`);
    expect([after.status, after.body.title]).toEqual([200, "Locked"]);
    expect(server.output()).not.toMatch(/database unreachable|unhandled error/);
  }, 60_000);
});
