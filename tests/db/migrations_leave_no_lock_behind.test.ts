// Prisma's schema engine holds a session-level advisory lock while it migrates. A server applies
// migrations when it opens the database; if that lock stayed on one of its pooled connections,
// every other process (a second server, the CLI, a deploy) would wait for it and fail to start.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "../../server/db/client";

const SCHEMA_ENGINE_LOCK = 72707369; // pg_advisory_lock(72707369), as the engine names it in its timeout error

describe.skipIf(!process.env.DATABASE_URL)("migrations on PostgreSQL", () => {
  afterAll(async () => {
    process.env.SKIP_MIGRATIONS = "1";
    await closeDb();
  });

  it("opening the database applies migrations and leaves no advisory lock behind", async () => {
    await closeDb();
    delete process.env.SKIP_MIGRATIONS;
    const db = await getDb();
    expect(await db.$queryRawUnsafe("SELECT 1 AS one")).toEqual([{ one: 1 }]);

    const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
    try {
      const { rows } = await other.query("SELECT pg_try_advisory_lock($1) AS free", [SCHEMA_ENGINE_LOCK]);
      expect(rows[0].free).toBe(true);
      await other.query("SELECT pg_advisory_unlock($1)", [SCHEMA_ENGINE_LOCK]);
    } finally {
      await other.end();
    }
  });
});
