// Browser tests: Debian's Chromium against `next start` (build first: NEXT_TELEMETRY_DISABLED=1 npx next build).
// The server runs on a fresh embedded database (or DATABASE_URL when set), seeded by tests/e2e/seed.ts
// before it starts; the seed writes the tenants and logins the tests use into E2E_DATA_DIR.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

// Evaluated in the runner first; workers inherit the environment, so they see the same values.
process.env.E2E_DATA_DIR ??= mkdtempSync(path.join(tmpdir(), "tdp-e2e-"));
process.env.E2E_PORT ??= "3107";
process.env.E2E_CONSUMER_PORT ??= "3108";
const baseURL = `http://127.0.0.1:${process.env.E2E_PORT}`;

export default defineConfig({
  testDir: "tests/e2e",
  outputDir: "test-results/e2e",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command: `npx tsx tests/e2e/seed.ts && exec node node_modules/next/dist/bin/next start -H 127.0.0.1 -p ${process.env.E2E_PORT}`,
    url: `${baseURL}/api/v1/openapi.json`,
    timeout: 120_000,
    reuseExistingServer: false,
    // The server's log lines (LOG_LEVEL=warn below) are on its stdout.
    stdout: "pipe",
    stderr: "pipe",
    env: {
      DATA_DIR: process.env.E2E_DATA_DIR,
      E2E_DATA_DIR: process.env.E2E_DATA_DIR,
      DEMO_SEED: "0",
      NEXT_TELEMETRY_DISABLED: "1",
      BETTER_AUTH_URL: baseURL,
      BETTER_AUTH_SECRET: "e2e-only-secret-0123456789abcdef0123456789abcdef",
      // Several sign-ins per run come from 127.0.0.1; the limit itself is covered by tests/dashboard.
      AUTH_SIGNIN_RATE_MAX: "100",
      // One owner drives most specs, faster than a person: a run's busiest minute reached 156 of the
      // default 200 dashboard requests per user (fixed one-minute windows, measured); on CI's faster
      // machine a page once never loaded, which such a 429 explains. The per-user limit is covered by tests/ratelimit.
      RATE_LIMIT_PER_USER: "5000",
      // Webhooks to the local consumer, with a short retry ladder so dead letters happen in seconds.
      WEBHOOK_ALLOW_LOOPBACK: "1",
      WEBHOOK_RETRY_DELAYS_MS: "0,300,300,300,300,300",
      // A whole failing ladder opens the endpoint's breaker: its last rung then waits for a probe this soon.
      WEBHOOK_BREAKER_PROBE_INTERVAL_MS: "300",
      WEBHOOK_POLL_INTERVAL_MS: "200",
      LOG_LEVEL: "warn",
    },
  },
});
