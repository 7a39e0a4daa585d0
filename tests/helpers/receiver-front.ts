// The server the receiver tests send real HTTP requests to. `startMount("lean")` (the production
// lean front, which hands /api/webhooks to Next) once the Next build contains the receivers' route;
// until the build is redone, the same lean front with the route file mounted in Next's place
// (receiver-front-main.ts). Either way: a real process, on this worker's database.
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort, spawnServer, type Running } from "../../scripts/bench/services";
import { closeDb } from "../../server/db/client";
import { mountEnv, ROOT, startMount } from "./http-mounts";

// NEXT_DIST_DIR names the build the lean front serves (next.config.ts); one without the receivers
// (e.g. a name with no build) runs them from source.
const buildHasReceivers = () => existsSync(path.join(ROOT, process.env.NEXT_DIST_DIR || ".next", "server", "app", "api", "webhooks"));

/**
 * Every receiver test's requests come from 127.0.0.1, and the suite's files share one Redis: the
 * per-IP limit is set out of their way unless a test sets it (tests/channels/receivers/
 * receiver_rate_limit.test.ts proves the limit from addresses of its own).
 */
export async function startReceiverFront(env: Record<string, string | undefined> = {}): Promise<Running> {
  env = { RATE_LIMIT_PER_IP: "1000000", ...env };
  if (buildHasReceivers()) return startMount("lean", env);
  await closeDb(); // the embedded database takes one process: the server's
  const port = await freePort();
  return spawnServer("receiver-front", ["--import", "tsx", path.join(ROOT, "tests/helpers/receiver-front-main.ts")], {
    port,
    cwd: ROOT,
    readyPath: "/api/v1",
    timeoutMs: 120_000,
    env: mountEnv(env),
  });
}
