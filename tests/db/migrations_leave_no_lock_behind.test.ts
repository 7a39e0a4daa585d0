// Prisma's schema engine holds a session-level advisory lock while it migrates. A server applies
// migrations when it opens the database; if that lock stayed on one of its pooled connections,
// every other process (a second server, the CLI, a deploy) would wait for it and fail to start.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase, closeDatabase } from "../../server/db/database";
import { hasPgbouncer, startPgbouncer } from "../helpers/pgbouncer";
import { databaseUrl, onServer, runDatabasePrefix } from "../setup/database-template";

const SCHEMA_ENGINE_LOCK = 72707369; // pg_advisory_lock(72707369), as the engine names it in its timeout error

describe.skipIf(!process.env.DATABASE_URL)("migrations on PostgreSQL", () => {
  afterAll(async () => {
    process.env.SKIP_MIGRATIONS = "1";
    await closeDatabase();
  });

  it("opening the database applies migrations and leaves no advisory lock behind", async () => {
    await closeDatabase();
    delete process.env.SKIP_MIGRATIONS;
    const db = (await openDatabase()).prisma;
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

  // Through a transaction pooler the lock would be taken on a server connection the pooler keeps
  // after the engine disconnects: the next process to migrate would wait on it for good.
  it.skipIf(!hasPgbouncer())(
    "behind_a_transaction_pooler_migrations_take_the_direct_url_and_leave_no_lock",
    async () => {
      const direct = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL!;
      const name = `${runDatabasePrefix(process.env.TDP_TEST_RUN_ID ?? "x")}pooled_${Math.random().toString(36).slice(2, 8)}`;
      await onServer(direct, [`CREATE DATABASE "${name}"`]);
      const bouncer = await startPgbouncer(direct);
      const own = { url: process.env.DATABASE_URL, direct: process.env.DIRECT_DATABASE_URL };
      await closeDatabase();
      process.env.DATABASE_URL = bouncer.url(databaseUrl(direct, name));
      process.env.DIRECT_DATABASE_URL = databaseUrl(direct, name);
      delete process.env.SKIP_MIGRATIONS;
      try {
        const db = (await openDatabase()).prisma;
        expect(await db.$queryRawUnsafe("SELECT count(*)::int AS applied FROM _prisma_migrations WHERE finished_at IS NOT NULL")).toEqual([
          { applied: expect.any(Number) },
        ]);
        const other = new pg.Client({ connectionString: databaseUrl(direct, name) });
        await other.connect();
        try {
          const { rows } = await other.query(
            "SELECT count(*)::int AS held FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = $1",
            [name],
          );
          expect(rows).toEqual([{ held: 0 }]);
        } finally {
          await other.end();
        }
      } finally {
        await closeDatabase();
        process.env.DATABASE_URL = own.url;
        if (own.direct === undefined) delete process.env.DIRECT_DATABASE_URL;
        else process.env.DIRECT_DATABASE_URL = own.direct;
        process.env.SKIP_MIGRATIONS = "1";
        await bouncer.stop();
        await onServer(direct, [`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`]);
      }
    },
    120_000,
  );
});
