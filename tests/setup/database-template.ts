// A migrated database template, made once per test run and copied for each test file: opening a
// fresh PGlite (its initdb) and migrating it took about 10 s per file; a copy opens in under one.
//   PGlite:     the template is a data directory; each file copies it into a DATA_DIR of its own.
//   PostgreSQL: the template is a database; each file gets `CREATE DATABASE … TEMPLATE` of its own,
//               so files no longer see each other's rows (or claim each other's webhook deliveries).
import { cpSync, mkdtempSync } from "node:fs";
import path from "node:path";
import pg from "pg";

/** The same server, another database. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Runs statements on the server's maintenance connection (the URL's own database). */
export async function onServer(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

/** Names of the databases this run created (its template and every file's copy). */
export const runDatabasePrefix = (runId: string) => `tdp_${runId}_`;

/** A new database copied from the run's template; resolves to its URL. */
export async function databaseFromTemplate(url: string, template: string, name: string): Promise<string> {
  // Copying needs the template free of sessions; another file's copy in progress can hold it for a moment.
  for (let attempt = 1; ; attempt++) {
    try {
      await onServer(url, [`CREATE DATABASE "${name}" TEMPLATE "${template}"`]);
      return databaseUrl(url, name);
    } catch (err) {
      if ((err as { code?: string }).code !== "55006" || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100 * Math.min(attempt, 10)));
    }
  }
}

/** A DATA_DIR of its own under `root`, holding a copy of the migrated PGlite template. */
export function dataDirFromTemplate(root: string, template: string, label: string): string {
  const dir = mkdtempSync(path.join(root, `tdp-test-${label}-`));
  cpSync(template, dir, { recursive: true });
  return dir;
}
