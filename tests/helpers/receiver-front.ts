// The server the receiver tests send real HTTP requests to. `startMount("lean")` (the production
// lean front, which hands /api/webhooks to Next) once the Next build contains the receivers' route;
// until the build is redone, the same lean front with the route file mounted in Next's place
// (receiver-front-main.ts). Either way: a real process, on this worker's database.
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort, spawnServer, type Running } from "../../scripts/bench/services";
import { closeDb } from "../../server/db/client";
import { mountEnv, ROOT, startMount } from "./http-mounts";

export const buildHasReceivers = () => existsSync(path.join(ROOT, ".next", "server", "app", "api", "webhooks"));

export async function startReceiverFront(env: Record<string, string | undefined> = {}): Promise<Running> {
  if (buildHasReceivers()) return startMount("lean", env);
  await closeDb(); // the embedded database takes one process: the server's
  const port = await freePort();
  return spawnServer("receiver-front", ["--import", "tsx", path.join(ROOT, "tests/helpers/receiver-front-main.ts")], {
    port, cwd: ROOT, readyPath: "/api/v1", timeoutMs: 120_000, env: mountEnv(env),
  });
}
