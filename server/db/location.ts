// Where the database is, as the settings say: read before it opens (the server's start, the CLI).
import "#server-only";
import { existsSync } from "node:fs";
import path from "node:path";
import { setting } from "../lib/settings";

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
export const embeddedDir = () => path.join(dataDir(), "pglite");
/** Whether the embedded database was created already (PostgreSQL's own marker file). */
export const embeddedDatabaseExists = () => existsSync(path.join(embeddedDir(), "PG_VERSION"));
/** The build's migrated, empty embedded database (scripts/build-server.mjs), when there is one. */
export const embeddedTemplateDir = () => path.resolve(setting("EMBEDDED_DB_TEMPLATE"));
export const embeddedTemplateExists = () => existsSync(path.join(embeddedTemplateDir(), "PG_VERSION"));
