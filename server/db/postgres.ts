// The PostgreSQL side of the database's door (server/db/database.ts), loaded only when DATABASE_URL
// is set: node-postgres (Prisma's adapter, per-call plans, probes, sessions) and postgres.js (the
// pipelined prepared statements). The embedded database never loads either.
import "#server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import postgres from "postgres";
import { DatabaseOutcomeUnknownError, isDatabaseUnavailable, neverReachedTheServer, statementWrites } from "../lib/database-errors";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import type { SqlRunner, Statement } from "../lib/sql";
import { traceDbCall, tracingEnabled } from "../observability/tracing";
import { assertDatabaseReachable, noteDatabaseError, watchDatabase } from "./availability";
import { behindTransactionPooler, directDatabaseUrl } from "./location";
import { unwatchPool, watchedPgPool, watchPool } from "./watchdog";

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
function runnerOver(open: () => postgres.Sql, prepare: boolean, count: () => void): { run: SqlRunner; end: () => Promise<void> } {
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
    count();
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
function plannedOver(pool: pg.Pool, count: () => void): SqlRunner {
  return async <Row>(statement: Statement, values: unknown[]) => {
    count();
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

/** What the door needs of PostgreSQL: Prisma's adapter, the runners, and how to migrate and close. */
export type PostgresDrivers = {
  adapter: SqlMigrationAwareDriverAdapterFactory;
  /** One plain query outside the breaker (a missing table is an answer here, not an outage). */
  plainQuery: <Row>(text: string) => Promise<Row[]>;
  hot: SqlRunner;
  writes: SqlRunner;
  planned: SqlRunner;
  generic: SqlRunner;
  session: () => pg.Client;
  /**
   * Migrations take a session-level advisory lock: a connection of their own, closed afterwards, so
   * the lock can never stay behind in the shared pool (where it would stop every other process from
   * migrating, i.e. from starting). Direct, never through a transaction pooler: the lock and the
   * engine's statements need one session throughout. Unbounded by the session timeouts (a role
   * default behind a pooler): an index build may take long.
   */
  migrationAdapter: () => SqlMigrationAwareDriverAdapterFactory;
  close: () => Promise<void>;
};

/** Opens the pools on `url`; `count` is called once per statement or Prisma operation run. */
export async function openPostgres(url: string, count: () => void): Promise<PostgresDrivers> {
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
  // Behind a transaction pooler nothing is prepared (see pipelinedConnections), so nothing
  // pipelines: one connection would answer one statement at a time, and the hot reads get as many
  // connections as the writes (client connections to a pooler are cheap).
  const prepare = !pooled;
  const writePool = runnerOver(() => pipelinedConnections(url, setting("DATABASE_STATEMENT_POOL_SIZE"), prepare), prepare, count);
  // With several connections postgres.js spreads the statements thin and scans its busy queue per query.
  const hotPool = runnerOver(() => pipelinedConnections(url, prepare ? 1 : setting("DATABASE_STATEMENT_POOL_SIZE"), prepare), prepare, count);
  // Behind a pooler no startup parameter gets through and nothing is prepared: planned per call, like `planned`.
  const genericPool = runnerOver(() => pipelinedConnections(url, 1, prepare, { plan_cache_mode: "force_generic_plan" }), prepare, count);
  watchDatabase(() => probePostgres(url));
  return {
    adapter: new PrismaPg(pool),
    plainQuery: async <Row>(text: string) => (await pool.query(text)).rows as Row[],
    hot: hotPool.run,
    writes: writePool.run,
    planned: plannedOver(pool, count),
    generic: genericPool.run,
    session: () => new pg.Client({ connectionString: directDatabaseUrl(), connectionTimeoutMillis: connectTimeoutMs() }),
    migrationAdapter: () => new PrismaPg({ connectionString: directDatabaseUrl(), max: 1, options: UNBOUNDED_SESSION_OPTIONS }),
    close: async () => {
      await Promise.all([writePool.end(), hotPool.end(), genericPool.end()]);
      pool.unwatch();
      await pool.end();
    },
  };
}
