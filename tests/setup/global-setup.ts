// With PostgreSQL, migrations are applied once here; workers then skip them. With PGlite each
// worker opens its own fresh data directory (see worker-env.ts) and migrates it on open.
import { PrismaPg } from "@prisma/adapter-pg";
import { applyMigrations } from "../../server/db/schema-engine";

export default async function setup() {
  const url = process.env.DATABASE_URL;
  console.log(`[tests] database: ${url ? "postgres" : "pglite (embedded)"}; rate-limit store: ${process.env.REDIS_URL ? "redis" : "memory"}`);
  if (url) await applyMigrations(new PrismaPg({ connectionString: url }));
}
