// The one database client of the process. PostgreSQL when DATABASE_URL is set (production, CI);
// otherwise an embedded PGlite persisted under `.data/` (a fresh clone runs with no setup).
// Migrations in prisma/migrations are applied on first use, through the same driver adapter.
import "#server-only";
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import postgres from "postgres";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaClient } from "./generated/client";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded-lock";
import { unwatchPool, watchedPgPool, watchPool } from "./watchdog";
import { DatabaseOutcomeUnknownError, isDatabaseUnavailable, neverReachedTheServer, statementWrites } from "../lib/database-errors";
import { assertDatabaseReachable, noteDatabaseError, watchDatabase } from "./availability";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import { traceDbCall, tracingEnabled } from "../observability/tracing";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

import type { SqlRunner, Statement } from "../lib/sql";
export type { SqlRunner, Statement };

type DbState = {
  prisma: PrismaClient;
  sql: SqlRunner;
  readSql: SqlRunner;
  plannedSql: SqlRunner;
  genericSql: SqlRunner;
  close: () => Promise<void>;
  kind: "postgres" | "pglite";
};
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
  log.info({ dir }, "embedded database created from the build's template");
}

/**
 * How long opening a PostgreSQL connection (or waiting for a pooled one) may take before the call
 * fails as "database unavailable" (a 503), instead of waiting for the driver's own 30 s or forever.
 */
const connectTimeoutMs = () => setting("DATABASE_CONNECT_TIMEOUT_MS");
/**
 * How long one statement may run: PostgreSQL's own `statement_timeout` (it cancels the statement,
 * which rolls its transaction back, so the 503 that follows is safe to retry).
 */
const queryTimeoutMs = () => setting("DATABASE_QUERY_TIMEOUT_MS");
/**
 * The server-side bounds every session of the pools runs with. Sent as startup parameters on a
 * direct connection; behind a transaction pooler (which refuses or drops them) they are the
 * application role's defaults in its database instead (`applyRoleTimeouts`).
 */
function sessionTimeouts(): Record<"statement_timeout" | "lock_timeout" | "idle_in_transaction_session_timeout", number> {
  return {
    statement_timeout: queryTimeoutMs(),
    lock_timeout: setting("DATABASE_LOCK_TIMEOUT_MS"),
    idle_in_transaction_session_timeout: setting("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS"),
  };
}

/** The same bounds as a libpq `options` string (node-postgres), or "" behind a pooler. */
const timeoutOptions = (pooled: boolean, timeouts = sessionTimeouts()) =>
  pooled
    ? undefined
    : Object.entries(timeouts)
        .map(([name, ms]) => `-c ${name}=${ms}`)
        .join(" ");

/** Options that lift the bounds again, for the migrations' own direct connection (an index build may take long). */
const UNBOUNDED_SESSION_OPTIONS = "-c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0";

/**
 * Behind a transaction pooler no startup parameter reaches PostgreSQL, and a session SET would stay
 * on a server connection other clients share: the bounds become the application role's defaults in
 * its own database (`ALTER ROLE … IN DATABASE … SET`, which any role may do for itself), set
 * through the direct URL before the pools connect. They apply to server connections the pooler
 * opens from then on (ones it holds already keep their settings until it recycles them,
 * `server_lifetime`). A role that may not alter itself is logged, and the client-side watchdog
 * remains the only bound.
 */
async function applyRoleTimeouts(directUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: directUrl, connectionTimeoutMillis: connectTimeoutMs(), options: UNBOUNDED_SESSION_OPTIONS });
  client.on("error", () => {});
  try {
    await client.connect();
    const sets = Object.entries(sessionTimeouts())
      .map(([name, ms]) => `EXECUTE format('ALTER ROLE %I IN DATABASE %I SET ${name} = %L', current_user, current_database(), '${ms}ms');`)
      .join(" ");
    await client.query(`DO $$ BEGIN ${sets} END $$`);
  } catch (err) {
    log.warn({ error: err }, "could not set the statement and lock timeouts as the role's defaults behind the pooler");
  } finally {
    void client.end().catch(() => {});
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
function pipelinedConnections(url: string, max: number, prepare: boolean, parameters: Record<string, string> = {}) {
  return postgres(url, {
    max,
    prepare,
    // Startup parameters on a direct connection; behind a pooler the role's defaults (applyRoleTimeouts).
    connection: behindTransactionPooler()
      ? {}
      : { ...Object.fromEntries(Object.entries(sessionTimeouts()).map(([name, ms]) => [name, String(ms)])), ...parameters },
    onnotice: () => {},
    connect_timeout: connectTimeoutMs() / 1000,
    // Its default backoff grows to 20 s across failed connects, and queries wait for it: after an
    // outage requests would stall that long once the server is back. A short cap reconnects at once.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
  });
}

/**
 * Runs statements on a postgres.js pool through the breaker, counting each. No timer per call:
 * PostgreSQL cancels a statement past its statement_timeout, and the watchdog discards the whole
 * pool (every call in flight fails as "unavailable", a 503) when it gets no answer at all for
 * longer than that, as from a paused or lost server; the next call opens a new pool.
 */
function runnerOver(open: () => postgres.Sql, prepare: boolean): { run: SqlRunner; end: () => Promise<void> } {
  let connections = open();
  const watched = watchPool("statements", () => {
    const stuck = connections;
    connections = open();
    void stuck.end({ timeout: 0 }).catch(() => {});
  });
  const runStatement = async <Row>(statement: Statement, values: unknown[]) => {
    assertDatabaseReachable();
    watched.inflight++;
    try {
      return (await connections.unsafe(statement.text, values as postgres.ParameterOrJSON<never>[], { prepare })) as unknown as Row[];
    } catch (err) {
      noteDatabaseError(err);
      // A write (each runs in a transaction of its own) whose connection was lost once sent: PostgreSQL may have committed it.
      if (statementWrites(statement.text) && isDatabaseUnavailable(err) && !neverReachedTheServer(err)) throw new DatabaseOutcomeUnknownError(err);
      throw err;
    } finally {
      watched.inflight--;
      watched.progressed = true;
    }
  };
  // Tracing off (the default): the statement runs without a closure and a promise of the tracer's.
  const run = <Row>(statement: Statement, values: unknown[]): Promise<Row[]> => {
    operationCount++;
    return tracingEnabled() ? traceDbCall({ sql: statement.text }, () => runStatement<Row>(statement, values)) : runStatement<Row>(statement, values);
  };
  return {
    run,
    end: async () => {
      unwatchPool(watched);
      await connections.end({ timeout: 5 });
    },
  };
}

/**
 * Runs statements planned at each call, on the Prisma pool's connections but without Prisma's
 * per-query work: node-postgres sends each as an unnamed statement (parse, bind, execute in one
 * round trip), so PostgreSQL plans it for the values given and never falls back to a generic plan.
 * For a statement whose best plan depends on its values (the webhook claim); through the breaker,
 * counted, watched like every Prisma query (watchedPgPool).
 */
function plannedOver(pool: pg.Pool): SqlRunner {
  return async <Row>(statement: Statement, values: unknown[]) => {
    operationCount++;
    return traceDbCall({ sql: statement.text }, async () => {
      assertDatabaseReachable();
      try {
        return (await pool.query(statement.text, values)).rows as Row[];
      } catch (err) {
        // As raised (no DatabaseOutcomeUnknownError): a claim lost with its connection is undone by its leases running out.
        noteDatabaseError(err);
        throw err;
      }
    });
  };
}

async function open(): Promise<DbState> {
  const url = setting("DATABASE_URL");
  let adapter: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver = async () => {};
  let kind: DbState["kind"];
  let sql: SqlRunner;
  let readSql: SqlRunner;
  let plannedSql: SqlRunner;
  let genericSql: SqlRunner;
  /** One plain query outside the breaker (a missing table is an answer here, not an outage). */
  let plainQuery: <Row>(text: string) => Promise<Row[]>;
  if (url) {
    kind = "postgres";
    const pooled = behindTransactionPooler();
    if (pooled) await applyRoleTimeouts(directDatabaseUrl()!);
    const pool = watchedPgPool({
      connectionString: url,
      max: setting("DATABASE_POOL_SIZE"),
      connectionTimeoutMillis: connectTimeoutMs(),
      // The bounds as startup parameters (direct); behind a pooler the role's defaults. No
      // query_timeout (a timer per call that leaves the connection in use): the watchdog's sweep.
      options: timeoutOptions(pooled),
    });
    // An idle connection the server dropped is removed by the pool; without a listener the event would crash the process.
    pool.on("error", (err) => noteDatabaseError(err));
    adapter = new PrismaPg(pool);
    plainQuery = async <Row>(text: string) => (await pool.query(text)).rows as Row[];
    // The prepared statements (every request's key lookup, the hot lists) get a pool of their own on
    // postgres.js, which pipelines: queries from concurrent requests share a connection, leave in one
    // write and come back in one read. Under load that halves PostgreSQL's CPU per request and cuts
    // this process's socket writes (docs/architecture.md, "Hot paths"); few connections suffice.
    const prepare = !pooled;
    const statements = runnerOver(() => pipelinedConnections(url, setting("DATABASE_STATEMENT_POOL_SIZE"), prepare), prepare);
    sql = statements.run;
    // Every API request's key lookup and the hot lists (short indexed reads) share ONE connection:
    // under load each write then carries the statements of many requests, and PostgreSQL answers
    // them in one read (with several connections, postgres.js spreads them thin and its busy queue
    // is scanned linearly per query). Writes that may wait on a row lock (ingest) stay on the pool
    // above, so they never hold up the reads queued behind them. Behind a transaction pooler nothing
    // pipelines (see pipelinedConnections): one connection would answer one statement at a time, so
    // the reads get as many as the pool above (client connections to a pooler are cheap).
    const reads = runnerOver(() => pipelinedConnections(url, prepare ? 1 : setting("DATABASE_STATEMENT_POOL_SIZE"), prepare), prepare);
    readSql = reads.run;
    plannedSql = plannedOver(pool);
    // One connection whose prepared statements always keep the plan made at their first call (see
    // getGenericPlanSql); opened on first use. Behind a pooler no startup parameter gets through, and
    // nothing is prepared: each call is planned for its values, like plannedSql.
    const generic = runnerOver(() => pipelinedConnections(url, 1, prepare, { plan_cache_mode: "force_generic_plan" }), prepare);
    genericSql = generic.run;
    watchDatabase(() => probePostgres(url));
    closeDriver = async () => {
      await Promise.all([statements.end(), reads.end(), generic.end()]);
      pool.unwatch();
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
    plannedSql = sql;
    genericSql = sql;
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
    // Unbounded by the session timeouts (a role default behind a pooler): an index build may take long.
    const migrating = url ? new PrismaPg({ connectionString: directDatabaseUrl(), max: 1, options: UNBOUNDED_SESSION_OPTIONS }) : adapter;
    const applied = await applyMigrations(migrating);
    if (applied.length) log.info({ applied }, "migrations applied");
  }
  const base = new PrismaClient({ adapter });
  const prisma = base.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        operationCount++;
        return traceDbCall({ model, operation, args }, async () => {
          assertDatabaseReachable();
          try {
            return await query(args);
          } catch (err) {
            noteDatabaseError(err);
            throw err;
          }
        });
      },
    },
  }) as unknown as PrismaClient;
  return {
    prisma,
    sql,
    readSql,
    plannedSql,
    genericSql,
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

/** `getDb` without waiting, once the database is open (a request's path awaits nothing for it then). */
export const dbIfOpen = (): PrismaClient | null => db.open?.prisma ?? null;

/** The prepared-statement runner over the same connections as `getDb()`. */
export function getSql(): Promise<SqlRunner> {
  void getDb();
  return db.opening!.then((s) => s.sql);
}

/**
 * A runner whose statements PostgreSQL plans at each call for their values (see plannedOver): for a
 * statement whose generic plan would be slow. The same runner as `getSql()` on PGlite.
 */
export function getPlannedSql(): Promise<SqlRunner> {
  void getDb();
  return db.opening!.then((s) => s.plannedSql);
}

/**
 * A runner of prepared statements that PostgreSQL plans once per connection and never again
 * (`plan_cache_mode = force_generic_plan`): for a hot statement whose planning costs more than its
 * execution and whose generic plan is known to be good whatever the values (the webhook claim). By
 * default PostgreSQL keeps planning such a statement at every call when it guesses the generic plan
 * costlier. Its own connection. On PGlite the same runner as `getSql()`.
 */
export function getGenericPlanSql(): Promise<SqlRunner> {
  void getDb();
  return db.opening!.then((s) => s.genericSql);
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

/**
 * Where the operator's reads go (readiness's `SELECT 1`, the metrics scrape's backlog), once the
 * database is open: node-postgres's pool on PostgreSQL, never the pipelined connections of the
 * requests' hot statements. Those statements' driver code (postgres.js) is optimized for their
 * shapes; a probe's different ones, every few seconds, threw that code away (under --trace-deopt,
 * postgres.js's build, unsafe, BindComplete and CommandComplete deoptimized only with a scrape) for
 * every request to pay again. On PGlite the one runner there is.
 */
export const probeSqlIfOpen = (): SqlRunner | null => db.open?.plannedSql ?? null;

export async function closeDb(): Promise<void> {
  const closing = db.opening;
  db.opening = undefined;
  db.open = undefined;
  if (closing) await (await closing).close();
}

export const dbOperationCount = () => operationCount;
