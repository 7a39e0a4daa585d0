// Starts a real production mount (the lean front, or `next start`) on a free port on 127.0.0.1,
// against this worker's database, for tests that send real HTTP requests through it.
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort, spawnServer, type Running } from "../../scripts/bench/services";
import { closeDb } from "../../server/db/client";

export const ROOT = path.resolve(__dirname, "../..");
/**
 * The production build (`npm run build`) that spawned servers run. A file that needs it fails with this
 * message when it is missing, never skips: a bare `npx vitest` must not pass by leaving them out.
 */
export function requireNextBuild(): void {
  if (!existsSync(path.join(ROOT, ".next", "BUILD_ID")))
    throw new Error("this test file runs the production build: run `npm run build` first (npm test does it)");
}

export type MountKind = "lean" | "next";

export const MOUNT_ARGS: Record<MountKind, string[]> = {
  lean: ["--import", "tsx", path.join(ROOT, "server/http/main.ts")],
  next: [path.join(ROOT, "node_modules/next/dist/bin/next"), "start", "-H", "127.0.0.1"],
};

/**
 * Starts a mount on this worker's database. The embedded PGlite allows one process per directory,
 * so this process's own client is closed first (the server child then holds the lock).
 */
export async function startMount(kind: MountKind, env: Record<string, string | undefined> = {}): Promise<Running> {
  requireNextBuild();
  await closeDb();
  const port = await freePort();
  const args = kind === "next" ? [...MOUNT_ARGS.next, "-p", String(port)] : MOUNT_ARGS.lean;
  return spawnServer(kind, args, { port, cwd: ROOT, readyPath: "/api/v1", timeoutMs: 120_000, env: mountEnv(env) });
}

/** A test server's environment: this worker's database, quiet, production mode, plus `env`. */
export function mountEnv(env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    DATABASE_URL: process.env.DATABASE_URL,
    // The suite's direct URL (TEST_POOLER) belongs to its DATABASE_URL, not to a cluster a test passes.
    DIRECT_DATABASE_URL: "DATABASE_URL" in env ? undefined : process.env.DIRECT_DATABASE_URL,
    DATA_DIR: process.env.DATA_DIR,
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    // Its sweep would race tests/conversations' own sweeps for the messages they set up.
    SEND_RECOVERY_INTERVAL_MS: "0",
    // Its SLA check would claim breaches the SLA tests expect their own check processes to claim.
    SLA_CHECK_INTERVAL_MS: "0",
    ...env,
  };
}
