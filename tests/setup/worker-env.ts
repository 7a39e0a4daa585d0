import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

process.env.LOG_LEVEL ??= "silent";
if (process.env.DATABASE_URL) {
  process.env.SKIP_MIGRATIONS = "1";
} else if (!process.env.DATA_DIR) {
  process.env.DATA_DIR = mkdtempSync(path.join(tmpdir(), `tdp-test-${process.env.VITEST_POOL_ID ?? "0"}-`));
}
process.env.RATE_LIMIT_STORE_TIMEOUT_MS ??= "5000"; // a loaded CI machine must not mark a healthy Redis down (exact-count tests)
