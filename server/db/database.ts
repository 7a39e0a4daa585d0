// The one door to the database. `openDatabase()` runs once before serving (it applies pending
// migrations); everything else takes `database()` and picks a runner by what its statement is for:
//
// | runner    | for                                                   | on PostgreSQL                                  |
// |-----------|-------------------------------------------------------|------------------------------------------------|
// | `prisma`  | models, relations, transactions: everything else      | node-postgres pool (Prisma's adapter)          |
// | `hot`     | short indexed reads on every request's path           | ONE pipelined postgres.js connection           |
// | `writes`  | prepared statements that write or may wait on a lock  | a small pipelined postgres.js pool             |
// | `planned` | planned per call for its values; probes and scrapes   | the node-postgres pool, without Prisma         |
// | `generic` | a hot statement whose first plan stays good (claim)   | one postgres.js connection, force_generic_plan |
// | `session` | what a session must keep (LISTEN)                     | a node-postgres client on the direct URL       |
//
// On the embedded PGlite (no DATABASE_URL) every runner is the one PGlite instance, and neither
// PostgreSQL driver is loaded (server/db/postgres.ts is imported only with DATABASE_URL). A raw statement
// is a typed `statement<Row>(sql)`; inside a Prisma transaction it runs through `queryOn(tx, …)`.
// Why two drivers, measured once: postgres.js pipelines concurrent requests' statements on one
// connection (GET /api/v1/offerings at -c 50 went from 0.84 to 1.10 of the physical limit, and
// PostgreSQL's CPU per request about halved, bca7c04, b8f2c4a); Prisma's adapter needs node-postgres.
// The generic plan halved the paced claim's database CPU (docs/perf/2026-11-webhook-delivery.md).
import "#server-only";
import { cpSync, mkdirSync, renameSync, rmSync } from "node:fs";
import type pg from "pg";
import { PrismaClient } from "./generated/client";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded-lock";
import type { PostgresDrivers } from "./postgres";
import { assertDatabaseReachable, noteDatabaseError, watchDatabase } from "./availability";
import { log } from "../lib/log";
import { dataDir, embeddedDatabaseExists, embeddedDir, embeddedTemplateDir, embeddedTemplateExists } from "./location";
import { setting } from "../lib/settings";
import { traceDbCall } from "../observability/tracing";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

import type { SqlRunner, Statement } from "../lib/sql";
export type { SqlRunner, Statement };

export type Database = {
  readonly kind: "postgres" | "pglite";
  /** Prisma: models, relations, transactions. Everything without a reason to use another runner. */
  readonly prisma: PrismaClient;
  /**
   * Short indexed reads on every request's path (the key lookup, the hot lists): ONE pipelined
   * connection, so one socket write carries many requests' statements. Never a statement that may
   * wait on a lock: everything queued behind it would wait too.
   */
  readonly hot: SqlRunner;
  /** Prepared statements that write or may wait on a lock (ingest, bookings, delivery records): a small pipelined pool. */
  readonly writes: SqlRunner;
  /**
   * Planned at each call for the values given (unnamed statements on Prisma's pool, without
   * Prisma's per-query work): a statement whose best plan depends on its values (the unpaced
   * claim), and the operator's probes and scrapes, whose different shapes every few seconds would
   * otherwise throw away the hot connection's optimized driver code.
   */
  readonly planned: SqlRunner;
  /**
   * Prepared statements planned once per connection and never again (`plan_cache_mode =
   * force_generic_plan`): a hot statement whose planning costs more than its execution and whose
   * generic plan is good whatever the values (the paced webhook claim). Its own connection.
   */
  readonly generic: SqlRunner;
  /**
   * A new, unconnected connection of its own on the direct URL (DIRECT_DATABASE_URL, else
   * DATABASE_URL), for what a session must keep (the webhook worker's LISTEN), which a
   * transaction-mode pooler would not. Null on PGlite (one process: nothing to listen to).
   */
  readonly session: (() => pg.Client) | null;
};

type OpenDatabase = Database & { close: () => Promise<void> };
// One per process (PGlite allows a single opener per directory): production runs each server
// module once (the compiled lean front); under `next start` only the route bundle loads this module.
const state: { opening?: Promise<OpenDatabase>; open?: OpenDatabase } = {};
/** Counts database operations (Prisma and prepared statements), so tests can prove a path touched no database (e.g. malformed tokens). */
let operationCount = 0;

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
 * The embedded PostgreSQL's memory lives in one WebAssembly heap that never shrinks, so its buffers
 * are sized for one small tenant base rather than PostgreSQL's server defaults (128 MB of shared
 * buffers alone): PGlite writes these into the data directory's postgresql.conf at each open.
 */
function embeddedPostgresConf(): string[] {
  return [`shared_buffers=${setting("EMBEDDED_DB_SHARED_BUFFERS")}`, "wal_buffers=1MB", "temp_buffers=2MB", "work_mem=4MB", "maintenance_work_mem=16MB"];
}

/** Drivers for the door: PostgreSQL's (server/db/postgres.ts), or the one embedded PGlite for every runner. */
type Drivers = Omit<PostgresDrivers, "session"> & { session: PostgresDrivers["session"] | null };

const countOperation = () => {
  operationCount++;
};

async function openEmbedded(): Promise<Drivers> {
  const dir = embeddedDir();
  mkdirSync(dataDir(), { recursive: true });
  acquireEmbeddedLock(dataDir());
  if (!embeddedDatabaseExists() && embeddedTemplateExists()) createEmbeddedFromTemplate(dir);
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([import("@electric-sql/pglite"), import("pglite-prisma-adapter")]);
  const pglite = await PGlite.create(dir, { postgresqlconf: embeddedPostgresConf() });
  const adapter = new PrismaPGlite(pglite);
  const run = async <Row>(statement: Statement<Row>, values: unknown[]) => {
    countOperation();
    return traceDbCall({ sql: statement.text }, async () => (await pglite.query<Row>(statement.text, values)).rows);
  };
  return {
    adapter,
    plainQuery: async <Row>(text: string) => (await pglite.query<Row>(text)).rows,
    hot: run,
    writes: run,
    planned: run,
    generic: run,
    session: null,
    migrationAdapter: () => adapter,
    close: async () => {
      await pglite.close();
      releaseEmbeddedLock(dataDir());
    },
  };
}

async function open(): Promise<OpenDatabase> {
  const url = setting("DATABASE_URL");
  const drivers: Drivers = url ? await (await import("./postgres")).openPostgres(url, countOperation) : await openEmbedded();
  const { adapter } = drivers;
  const { hasPendingMigrations } = await import("./schema-engine");
  if (!setting("SKIP_MIGRATIONS") && (await hasPendingMigrations(drivers.plainQuery))) {
    const { applyMigrations } = await import("./schema-engine");
    const applied = await applyMigrations(drivers.migrationAdapter());
    if (applied.length) log.info({ applied }, "migrations applied");
  }
  const base = new PrismaClient({ adapter });
  const prisma = base.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        countOperation();
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
    kind: url ? "postgres" : "pglite",
    prisma,
    hot: drivers.hot,
    writes: drivers.writes,
    planned: drivers.planned,
    generic: drivers.generic,
    session: drivers.session,
    close: async () => {
      watchDatabase(null);
      await base.$disconnect();
      await drivers.close();
    },
  };
}

/** Opens the database once (applying pending migrations first); later calls get the same one. */
export function openDatabase(): Promise<Database> {
  if (!state.opening) {
    const opening: Promise<OpenDatabase> = open().then(
      (opened) => {
        if (state.opening === opening) state.open = opened;
        return opened;
      },
      (err) => {
        state.opening = undefined;
        throw err;
      },
    );
    state.opening = opening;
  }
  return state.opening;
}

export class DatabaseNotOpenError extends Error {
  constructor() {
    super("the database is not open: openDatabase() runs before serving, and before a CLI command or a test uses it");
    this.name = "DatabaseNotOpenError";
  }
}

/** The open database; throws DatabaseNotOpenError before `openDatabase()` has finished. */
export function database(): Database {
  if (!state.open) throw new DatabaseNotOpenError();
  return state.open;
}

/** The open database or undefined: for the probes and the scrape, which answer while the process opens or closes it. */
export const databaseIfOpen = (): Database | undefined => state.open;

export async function closeDatabase(): Promise<void> {
  const closing = state.opening;
  state.opening = undefined;
  state.open = undefined;
  if (closing) await (await closing).close();
}

/**
 * Runs a typed statement on Prisma's connection: the client's, or inside `$transaction(async (tx) =>
 * …)` the transaction's (pass `tx`). Rows as Prisma converts them (timestamps as Date); unawaited,
 * it can join `$transaction([...])`.
 */
export const queryOn = <Row>(on: Pick<PrismaClient, "$queryRawUnsafe">, statement: Statement<Row>, values: unknown[]) =>
  on.$queryRawUnsafe<Row[]>(statement.text, ...values);

/** `queryOn` for a statement answering no rows: how many rows it changed. */
export const executeOn = (on: Pick<PrismaClient, "$executeRawUnsafe">, statement: Statement, values: unknown[]) =>
  on.$executeRawUnsafe(statement.text, ...values);

export const dbOperationCount = () => operationCount;
