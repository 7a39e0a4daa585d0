// The one database client of the process. PostgreSQL when DATABASE_URL is set (production, CI);
// otherwise an embedded PGlite persisted under `.data/` (a fresh clone runs with no setup).
// Migrations in prisma/migrations are applied on first use, through the same driver adapter.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaClient } from "./generated/client";
import { acquireEmbeddedLock, releaseEmbeddedLock } from "./embedded-lock";
import { log } from "../log";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

type DbState = { prisma: PrismaClient; close: () => Promise<void>; kind: "postgres" | "pglite" };
// Kept on globalThis: under the lean front, Next's bundled copy of this module and the front's own
// copy run in one process, and must share one client (PGlite allows a single opener per directory).
const shared = globalThis as { __tenantDataDb?: Promise<DbState> };
/** Counts Prisma operations, so tests can prove a path touched no database (e.g. malformed tokens). */
let operationCount = 0;

export const dataDir = () => path.resolve(process.env.DATA_DIR ?? ".data");
export const databaseKind = () => (process.env.DATABASE_URL ? "postgres" : "pglite");

async function open(): Promise<DbState> {
  const url = process.env.DATABASE_URL;
  let adapter: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver = async () => {};
  let kind: DbState["kind"];
  if (url) {
    kind = "postgres";
    adapter = new PrismaPg({ connectionString: url, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
  } else {
    kind = "pglite";
    const dir = path.join(dataDir(), "pglite");
    mkdirSync(dataDir(), { recursive: true });
    acquireEmbeddedLock(dataDir());
    const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
      import("@electric-sql/pglite"),
      import("pglite-prisma-adapter"),
    ]);
    const pglite = await PGlite.create(dir);
    adapter = new PrismaPGlite(pglite);
    closeDriver = async () => {
      await pglite.close();
      releaseEmbeddedLock(dataDir());
    };
  }
  if (process.env.SKIP_MIGRATIONS !== "1") {
    const { applyMigrations } = await import("./schema-engine");
    const applied = await applyMigrations(adapter);
    if (applied.length) log.info("migrations applied", { applied });
  }
  const base = new PrismaClient({ adapter });
  const prisma = base.$extends({
    query: {
      async $allOperations({ args, query }) {
        operationCount++;
        return query(args);
      },
    },
  }) as unknown as PrismaClient;
  return {
    prisma,
    kind,
    close: async () => {
      await base.$disconnect();
      await closeDriver();
    },
  };
}

/** Opens (once) and returns the database client, applying pending migrations first. */
export function getDb(): Promise<PrismaClient> {
  shared.__tenantDataDb ??= open().catch((err) => {
    shared.__tenantDataDb = undefined;
    throw err;
  });
  return shared.__tenantDataDb.then((s) => s.prisma);
}

export async function closeDb(): Promise<void> {
  const current = shared.__tenantDataDb;
  shared.__tenantDataDb = undefined;
  if (current) await (await current).close();
}

export const dbOperationCount = () => operationCount;
