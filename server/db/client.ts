// The one database client of the process. PostgreSQL when DATABASE_URL is set (production, CI);
// otherwise an embedded PGlite persisted under `.data/` (a fresh clone runs with no setup).
// Migrations in prisma/migrations are applied on first use, through the same driver adapter.
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import postgres from "postgres";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaClient } from "./generated/client";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded-lock";
import { DatabaseTimeoutError } from "../lib/database-errors";
import { assertDatabaseReachable, noteDatabaseError, watchDatabase } from "./availability";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import { traceDbCall } from "../observability/tracing";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

import type { SqlRunner, Statement } from "../lib/sql";
export type { SqlRunner, Statement };

type DbState = { prisma: PrismaClient; sql: SqlRunner; readSql: SqlRunner; close: () => Promise<void>; kind: "postgres" | "pglite" };
// One client per process (PGlite allows a single opener per directory): production runs each server
// module once (the compiled lean front); under `next start` only the route bundle loads this module.
const db: { opening?: Promise<DbState>; open?: DbState } = {};
/** Counts database operations (Prisma and prepared statements), so tests can prove a path touched no database (e.g. malformed tokens). */
let operationCount = 0;

export const dataDir = () => path.resolve(setting("DATA_DIR"));
export const databaseKind = () => (setting("DATABASE_URL") ? "postgres" : "pglite");
/**
 * Where work that needs a session of its own goes (migrations and their session advisory lock,
 * the webhook worker's LISTEN): DIRECT_DATABASE_URL, else DATABASE_URL. Behind a transaction-mode
 * pooler a session lasts one transaction, so these must bypass it.
 */
export const directDatabaseUrl = () => setting("DIRECT_DATABASE_URL") || setting("DATABASE_URL");
/**
 * Whether DATABASE_URL is a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor): then no
 * named prepared statement is used, since the next call may land on a server connection where it
 * does not exist (or names another statement). Explicit DATABASE_POOLER, else implied by a
 * DIRECT_DATABASE_URL (a direct URL is only needed beside a pooler).
 */
export const behindTransactionPooler = () => (setting("DATABASE_POOLER") ?? (setting("DIRECT_DATABASE_URL") ? "transaction" : "none")) === "transaction";
const embeddedDir = () => path.join(dataDir(), "pglite");
/** Whether the embedded database was created already (PostgreSQL's own marker file). */
export const embeddedDatabaseExists = () => existsSync(path.join(embeddedDir(), "PG_VERSION"));
/** The build's migrated, empty embedded database (scripts/build-server.mjs), when there is one. */
const embeddedTemplateDir = () => path.resolve(setting("EMBEDDED_DB_TEMPLATE"));
export const embeddedTemplateExists = () => existsSync(path.join(embeddedTemplateDir(), "PG_VERSION"));

/**
 * A new embedded database starts as a copy of the build's template (about 0.2 s, against about 4 s
 * for initdb and the migrations, whose work would also grow this process's WebAssembly heap for
 * good). Copied beside and renamed into place, so a crash mid-copy leaves no half database.
 * Migrations newer than the template are applied when it opens, as for any database.
 */
function createEmbeddedFromTemplate(dir: string): void {
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  cpSync(embeddedTemplateDir(), partial, { recursive: true });
  rmSync(dir, { recursive: true, force: true }); // without PG_VERSION it is no database (an initdb cut short)
  renameSync(partial, dir);
  log.info("embedded database created from the build's template", { dir });
}

/**
 * How long opening a PostgreSQL connection (or waiting for a pooled one) may take before the call
 * fails as "database unavailable" (a 503), instead of waiting for the driver's own 30 s or forever.
 */
const connectTimeoutMs = () => setting("DATABASE_CONNECT_TIMEOUT_MS");
/** How long one call may wait for its answer: a paused server holds connections open without answering. */
const queryTimeoutMs = () => setting("DATABASE_QUERY_TIMEOUT_MS");

/** `work`, or a DatabaseTimeoutError (a 503, and the breaker's probe) when it has no answer within the query timeout. */
function withinQueryTimeout<T>(work: Promise<T>): Promise<T> {
  const ms = queryTimeoutMs();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(ms)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Runs a database call through the breaker: refused at once during a known outage; a connection failure starts the probe. */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  assertDatabaseReachable();
  try {
    return await call();
  } catch (err) {
    noteDatabaseError(err);
    throw err;
  }
}

/** One connection of its own: connects and answers `SELECT 1` within the connect timeout, or throws. */
async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs(), query_timeout: connectTimeoutMs() });
  client.on("error", () => {}); // a failure surfaces through connect/query
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    void client.end().catch(() => {});
  }
}

/**
 * The embedded PostgreSQL's memory lives in one WebAssembly heap that never shrinks, so its buffers
 * are sized for one small tenant base rather than PostgreSQL's server defaults (128 MB of shared
 * buffers alone): PGlite writes these into the data directory's postgresql.conf at each open.
 */
function embeddedPostgresConf(): string[] {
  return [`shared_buffers=${setting("EMBEDDED_DB_SHARED_BUFFERS")}`, "wal_buffers=1MB", "temp_buffers=2MB", "work_mem=4MB", "maintenance_work_mem=16MB"];
}

/**
 * A postgres.js pool of `max` connections: prepared statements, pipelined (see `open`). Behind a
 * transaction pooler (`prepare` false) each statement is parsed unnamed on every call: postgres.js
 * then asks for the parameter types first and binds after (two round trips, not pipelined), the
 * price of statements that survive a change of server connection.
 */
function pipelinedConnections(url: string, max: number, prepare: boolean) {
  return postgres(url, {
    max,
    prepare,
    onnotice: () => {},
    connect_timeout: connectTimeoutMs() / 1000,
    // Its default backoff grows to 20 s across failed connects, and queries wait for it: after an
    // outage requests would stall that long once the server is back. A short cap reconnects at once.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
  });
}

/** Runs statements on `connections` through the breaker and the query timeout, counting each. */
function runnerOver(connections: postgres.Sql, prepare: boolean): SqlRunner {
  return async <Row>(statement: Statement, values: unknown[]) => {
    operationCount++;
    return traceDbCall({ sql: statement.text }, () =>
      guarded(
        async () =>
          (await withinQueryTimeout(connections.unsafe(statement.text, values as postgres.ParameterOrJSON<never>[], { prepare }))) as unknown as Row[],
      ),
    );
  };
}

async function open(): Promise<DbState> {
  const url = setting("DATABASE_URL");
  let adapter: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver = async () => {};
  let kind: DbState["kind"];
  let sql: SqlRunner;
  let readSql: SqlRunner;
  /** One plain query outside the breaker (a missing table is an answer here, not an outage). */
  let plainQuery: <Row>(text: string) => Promise<Row[]>;
  if (url) {
    kind = "postgres";
    const pool = new pg.Pool({
      connectionString: url,
      max: setting("DATABASE_POOL_SIZE"),
      connectionTimeoutMillis: connectTimeoutMs(),
      // Prisma's every query: node-postgres fails a call that has no answer in time ("Query read timeout").
      query_timeout: queryTimeoutMs(),
    });
    // An idle connection the server dropped is removed by the pool; without a listener the event would crash the process.
    pool.on("error", (err) => noteDatabaseError(err));
    adapter = new PrismaPg(pool);
    plainQuery = async <Row>(text: string) => (await pool.query(text)).rows as Row[];
    // The prepared statements (every request's key lookup, the hot lists) get a pool of their own on
    // postgres.js, which pipelines: queries from concurrent requests share a connection, leave in one
    // write and come back in one read. Under load that halves PostgreSQL's CPU per request and cuts
    // this process's socket writes (docs/architecture.md, "Hot paths"); few connections suffice.
    const prepare = !behindTransactionPooler();
    const statements = pipelinedConnections(url, setting("DATABASE_STATEMENT_POOL_SIZE"), prepare);
    sql = runnerOver(statements, prepare);
    // Every API request's key lookup and the hot lists (short indexed reads) share ONE connection:
    // under load each write then carries the statements of many requests, and PostgreSQL answers
    // them in one read (with several connections, postgres.js spreads them thin and its busy queue
    // is scanned linearly per query). Writes that may wait on a row lock (ingest) stay on the pool
    // above, so they never hold up the reads queued behind them. Behind a transaction pooler nothing
    // pipelines (see pipelinedConnections): one connection would answer one statement at a time, so
    // the reads get as many as the pool above (client connections to a pooler are cheap).
    const reads = pipelinedConnections(url, prepare ? 1 : setting("DATABASE_STATEMENT_POOL_SIZE"), prepare);
    readSql = runnerOver(reads, prepare);
    watchDatabase(() => probePostgres(url));
    closeDriver = async () => {
      await Promise.all([statements.end({ timeout: 5 }), reads.end({ timeout: 5 })]);
      await pool.end();
    };
  } else {
    kind = "pglite";
    const dir = embeddedDir();
    mkdirSync(dataDir(), { recursive: true });
    acquireEmbeddedLock(dataDir());
    if (!embeddedDatabaseExists() && embeddedTemplateExists()) createEmbeddedFromTemplate(dir);
    const [{ PGlite }, { PrismaPGlite }] = await Promise.all([import("@electric-sql/pglite"), import("pglite-prisma-adapter")]);
    const pglite = await PGlite.create(dir, { postgresqlconf: embeddedPostgresConf() });
    adapter = new PrismaPGlite(pglite);
    plainQuery = async <Row>(text: string) => (await pglite.query<Row>(text)).rows;
    sql = async <Row>(statement: Statement, values: unknown[]) => {
      operationCount++;
      return traceDbCall({ sql: statement.text }, async () => (await pglite.query<Row>(statement.text, values)).rows);
    };
    readSql = sql;
    closeDriver = async () => {
      await pglite.close();
      releaseEmbeddedLock(dataDir());
    };
  }
  const { hasPendingMigrations } = await import("./schema-engine");
  if (!setting("SKIP_MIGRATIONS") && (await hasPendingMigrations(plainQuery))) {
    const { applyMigrations } = await import("./schema-engine");
    // On PostgreSQL, migrations take a session-level advisory lock: they get connections of their
    // own, closed afterwards, so the lock can never stay behind in the shared pool (where it would
    // stop every other process from migrating, i.e. from starting). Direct, never through a
    // transaction pooler: the lock and the engine's statements need one session throughout.
    const applied = await applyMigrations(url ? new PrismaPg({ connectionString: directDatabaseUrl(), max: 1 }) : adapter);
    if (applied.length) log.info("migrations applied", { applied });
  }
  const base = new PrismaClient({ adapter });
  const prisma = base.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        operationCount++;
        return traceDbCall({ model, operation, args }, () => guarded(() => query(args)));
      },
    },
  }) as unknown as PrismaClient;
  return {
    prisma,
    sql,
    readSql,
    kind,
    close: async () => {
      watchDatabase(null);
      await base.$disconnect();
      await closeDriver();
    },
  };
}

/** Opens (once) and returns the database client, applying pending migrations first. */
export function getDb(): Promise<PrismaClient> {
  if (!db.opening) {
    const opening: Promise<DbState> = open().then(
      (state) => {
        if (db.opening === opening) db.open = state;
        return state;
      },
      (err) => {
        db.opening = undefined;
        throw err;
      },
    );
    db.opening = opening;
  }
  return db.opening.then((s) => s.prisma);
}

/** The prepared-statement runner over the same connections as `getDb()`. */
export function getSql(): Promise<SqlRunner> {
  void getDb();
  return db.opening!.then((s) => s.sql);
}

/** The runner without waiting, once the database is open: a hot path's query then leaves at once. */
export const sqlIfOpen = (): SqlRunner | null => db.open?.sql ?? null;

/**
 * The runner for short indexed reads on every request's path (the key lookup, the hot lists): one
 * pipelined connection of their own on PostgreSQL (see `open`), the same runner on PGlite. Never
 * a statement that may wait on a lock: everything queued behind it would wait too.
 */
export function getReadSql(): Promise<SqlRunner> {
  void getDb();
  return db.opening!.then((s) => s.readSql);
}

/** `getReadSql` without waiting, once the database is open. */
export const readSqlIfOpen = (): SqlRunner | null => db.open?.readSql ?? null;

export async function closeDb(): Promise<void> {
  const closing = db.opening;
  db.opening = undefined;
  db.open = undefined;
  if (closing) await (await closing).close();
}

export const dbOperationCount = () => operationCount;
