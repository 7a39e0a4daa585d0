// Drives Prisma's official schema engine compiled to WebAssembly through a driver adapter, so
// migrations apply (and can be created) without the native engine binary, which cannot be
// downloaded everywhere. It writes the standard `_prisma_migrations` table, so
// `prisma migrate deploy` keeps working wherever the native engine exists.
import { readFile, readdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { MigrationList, SchemaEngine } from "@prisma/schema-engine-wasm";
import { setting } from "../lib/settings";

const PRISMA_DIR = path.resolve(process.cwd(), "prisma");
const SCHEMA_PATH = path.join(PRISMA_DIR, "schema.prisma");
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, "migrations");
const NO_FILTERS = { externalTables: [], externalEnums: [] };

type EngineModule = typeof import("@prisma/schema-engine-wasm");
let engineModule: Promise<EngineModule> | undefined;

/** Instantiates the wasm once per process (the package's own entry relies on wasm ESM imports). */
function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    // The package exports only its entry, so locate its folder from that entry's path.
    // Resolved and imported by Node at run time, out of a bundler's sight: Next's Turbopack rewrites
    // a visible `require.resolve("…")` into a module id, which is not a path.
    const { createRequire } = process.getBuiltinModule("node:module");
    const dir = path.dirname(createRequire(import.meta.url).resolve("@prisma/schema-engine-wasm"));
    const bg = await import(/* turbopackIgnore: true */ /* webpackIgnore: true */ pathToFileURL(path.join(dir, "schema_engine_bg.js")).href);
    const bytes = await readFile(path.join(dir, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
    return bg as EngineModule;
  })();
  return engineModule;
}

/**
 * Adapts the factory for the engine. @prisma/adapter-pg runs a script by splitting it on every `;`,
 * dollar-quoted function bodies included, which breaks hand-written functions and triggers in
 * migrations; PostgreSQL's simple query protocol runs a whole multi-statement script in one round
 * trip, so scripts are sent as they are. And `release()` closes what the engine connected: on
 * PostgreSQL it holds a session-level advisory lock while it works, which must not outlive the run
 * on an idle pooled connection (every other process would wait for it, i.e. fail to start).
 */
function forEngine(factory: SqlMigrationAwareDriverAdapterFactory) {
  type EngineAdapter = { executeScript(script: string): Promise<void>; dispose(): Promise<void>; client?: { query(sql: string): Promise<unknown> } };
  const isPg = factory.adapterName === "@prisma/adapter-pg";
  const connected: EngineAdapter[] = [];
  const patch = <A>(adapter: A): A => {
    const a = adapter as unknown as EngineAdapter;
    if (isPg && a.client?.query) {
      const pool = a.client;
      a.executeScript = async (script: string) => {
        await pool.query(script);
      };
      connected.push(a);
    }
    return adapter;
  };
  const adapted = Object.assign(Object.create(factory) as SqlMigrationAwareDriverAdapterFactory, {
    connect: async () => patch(await factory.connect()),
    connectToShadowDb: async () => patch(await factory.connectToShadowDb()),
  });
  // PGlite's adapter is the process's one database handle: it is never closed here.
  const release = () => Promise.all(connected.splice(0).map((a) => a.dispose().catch(() => {})));
  return { adapted, release };
}

async function withEngine<T>(adapterFactory: SqlMigrationAwareDriverAdapterFactory, run: (engine: SchemaEngine, datamodel: string) => Promise<T>): Promise<T> {
  const mod = await loadEngineModule();
  const datamodel = await readFile(SCHEMA_PATH, "utf8");
  const log = setting("MIGRATE_DEBUG") ? (line: string) => console.error(line) : () => {};
  const { adapted, release } = forEngine(adapterFactory);
  const engine = await mod.SchemaEngine.new({ datamodels: [[SCHEMA_PATH, datamodel]] }, log, bindMigrationAwareSqlAdapterFactory(adapted));
  try {
    return await run(engine, datamodel);
  } finally {
    engine.free();
    await release();
  }
}

async function readMigrationList(): Promise<MigrationList> {
  const names = await migrationNames();
  const lockPath = path.join(MIGRATIONS_DIR, "migration_lock.toml");
  return {
    baseDir: MIGRATIONS_DIR,
    lockfile: { path: "migration_lock.toml", content: existsSync(lockPath) ? await readFile(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: "migration.sql",
          content: { tag: "ok" as const, value: await readFile(path.join(MIGRATIONS_DIR, name, "migration.sql"), "utf8") },
        },
      })),
    ),
  };
}

/** Migration folders on disk. */
async function migrationNames(): Promise<string[]> {
  if (!existsSync(MIGRATIONS_DIR)) return [];
  return (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/**
 * Whether any migration folder is not yet recorded as applied, read with one plain query: an
 * up-to-date database (every start but the first after an upgrade) never loads the schema engine,
 * whose WebAssembly instance would stay in the server's memory for good.
 */
export async function hasPendingMigrations(query: (text: string) => Promise<{ migration_name: string }[]>): Promise<boolean> {
  let applied: Set<string>;
  try {
    applied = new Set(
      (await query("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL")).map((r) => r.migration_name),
    );
  } catch {
    return true; // no _prisma_migrations table yet: a new database
  }
  return (await migrationNames()).some((name) => !applied.has(name));
}

/** Applies every migration in prisma/migrations not yet recorded in `_prisma_migrations`. */
export async function applyMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  const migrationsList = await readMigrationList();
  return withEngine(adapterFactory, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList, filters: NO_FILTERS });
    return out.appliedMigrationNames;
  });
}

/** The SQL that takes the migrations' end state to the schema (empty when they match). */
export async function diffMigrationsToSchema(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const migrationsList = await readMigrationList();
  return withEngine(adapterFactory, async (engine, datamodel) => {
    const from = migrationsList.migrationDirectories.length ? ({ tag: "migrations", ...migrationsList } as const) : ({ tag: "empty" } as const);
    const result = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: datamodel }] },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    });
    return (result.stdout ?? "").trim();
  });
}
