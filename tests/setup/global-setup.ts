// Once per test run: a migrated database template that each test file copies (database-template.ts),
// and one directory for the run's files, removed at the end with everything in it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { applyMigrations } from "../../server/db/schema-engine";
import { databaseUrl, onServer, runDatabasePrefix } from "./database-template";

export default async function setup() {
  // Behind a pooler (TEST_POOLER=pgbouncer) databases are made and migrated on the direct URL:
  // CREATE DATABASE … TEMPLATE needs the template free of sessions, which a pooler would keep open.
  const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  console.log(
    `[tests] database: ${url ? (url === process.env.DATABASE_URL ? "postgres" : "postgres through a pooler") : "pglite (embedded)"}; rate-limit store: ${process.env.REDIS_URL ? "redis" : "memory"}`,
  );
  const root = mkdtempSync(path.join(tmpdir(), "tdp-run-"));
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  // Test workers inherit these (they are forked after global setup).
  process.env.TDP_TEST_ROOT = root;
  process.env.TDP_TEST_RUN_ID = runId;

  if (!url) {
    await migratePgliteTemplate(path.join(root, "template"));
    process.env.TDP_PGLITE_TEMPLATE = path.join(root, "template");
    return () => rmSync(root, { recursive: true, force: true });
  }
  if (process.env.API_BASE_URL) {
    // Over HTTP (scripts/test-mounts.sh) the tests write rows into the database the server reads: one shared database.
    await applyMigrations(new PrismaPg({ connectionString: url, max: 1 }));
    return () => rmSync(root, { recursive: true, force: true });
  }
  const template = `${runDatabasePrefix(runId)}template`;
  await onServer(url, [`CREATE DATABASE "${template}"`]);
  await applyMigrations(new PrismaPg({ connectionString: databaseUrl(url, template), max: 1 }));
  process.env.TDP_PG_TEMPLATE = template;
  return async () => {
    await dropRunDatabases(url, runId);
    rmSync(root, { recursive: true, force: true });
  };
}

/** Creates and migrates an embedded database in `dir` (the DATA_DIR layout: `dir/pglite`), then closes it. */
async function migratePgliteTemplate(dir: string): Promise<void> {
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([import("@electric-sql/pglite"), import("pglite-prisma-adapter")]);
  mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(path.join(dir, "pglite"));
  try {
    await applyMigrations(new PrismaPGlite(pglite));
  } finally {
    await pglite.close();
  }
}

async function dropRunDatabases(url: string, runId: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [runDatabasePrefix(runId)]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
