// Before each test file: its own copy of the run's migrated database template (global-setup.ts).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { dataDirFromTemplate, databaseFromTemplate, databaseUrl, runDatabasePrefix } from "./database-template";
import { resetSettingsOnEnvChange } from "../../server/lib/settings";

// Tests change process.env as they go; settings are read once per process otherwise.
resetSettingsOnEnvChange();

process.env.LOG_LEVEL ??= "silent";
process.env.RATE_LIMIT_STORE_TIMEOUT_MS ??= "5000"; // a loaded CI machine must not mark a healthy Redis down (exact-count tests)
const label = `${process.env.VITEST_POOL_ID ?? "0"}_${process.pid}`;
// Rate-limit counters of their own in the shared Redis: another file's burst, or its reset of the
// store (which deletes every key under the prefix), never meets this file's counts.
process.env.RATE_LIMIT_KEY_PREFIX ??= `rl-test-${label}-${Math.random().toString(36).slice(2, 8)}`;

if (process.env.DATABASE_URL) {
  process.env.SKIP_MIGRATIONS = "1"; // the template (or, over HTTP, the shared database) is migrated
  const template = process.env.TDP_PG_TEMPLATE;
  if (template && !process.env.TDP_OWN_DATABASE) {
    const name = `${runDatabasePrefix(process.env.TDP_TEST_RUN_ID ?? "x")}${label}_${Math.random().toString(36).slice(2, 8)}`;
    const direct = process.env.DIRECT_DATABASE_URL;
    if (direct) {
      // Through a pooler (TEST_POOLER=pgbouncer): the copy is made directly, then used through both.
      process.env.DIRECT_DATABASE_URL = await databaseFromTemplate(direct, template, name);
      process.env.DATABASE_URL = databaseUrl(process.env.DATABASE_URL, name);
    } else process.env.DATABASE_URL = await databaseFromTemplate(process.env.DATABASE_URL, template, name);
    process.env.TDP_OWN_DATABASE = name;
  }
} else if (!process.env.DATA_DIR) {
  const root = process.env.TDP_TEST_ROOT ?? tmpdir();
  const template = process.env.TDP_PGLITE_TEMPLATE;
  if (template) {
    process.env.DATA_DIR = dataDirFromTemplate(root, template, label);
    process.env.SKIP_MIGRATIONS = "1";
  } else {
    process.env.DATA_DIR = mkdtempSync(path.join(root, `tdp-test-${label}-`));
  }
}
