// `npm run migrate`: applies pending migrations (prisma/migrations) to DATABASE_URL (through
// DIRECT_DATABASE_URL when set: never through a transaction-mode pooler), or to the
// embedded PGlite under DATA_DIR when it is unset, and prints what it applied as JSON. Servers
// also migrate on start; this is for deploy pipelines that migrate before rolling out.
import { PrismaPg } from "@prisma/adapter-pg";
import { applyMigrations } from "../server/db/schema-engine";
import { setLogDestination } from "../server/lib/log";

setLogDestination(2); // stdout is the JSON printed below; log lines ("migrations applied") go to stderr

const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
if (url) {
  const applied = await applyMigrations(new PrismaPg({ connectionString: url, max: 1 }));
  console.log(JSON.stringify({ database: "postgres", applied }));
} else {
  // Opening the embedded database applies pending migrations (and takes its one-process lock).
  const { closeDb, getDb } = await import("../server/db/client");
  delete process.env.SKIP_MIGRATIONS;
  await getDb();
  await closeDb();
  console.log(JSON.stringify({ database: "pglite", migrated: true }));
}
