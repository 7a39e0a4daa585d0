// Entry of the lean production front. `npm start` runs its compiled form, dist/server/main.mjs
// (scripts/build-server.mjs); `node --import tsx server/http/main.ts` runs the source.
// HOST (default 127.0.0.1) and PORT (default 3000).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { closeServerProcess, seedDemoTenantIfEnabled, startServerProcess, stopBackgroundWork } from "./startup";
import { closeDb, dataDir, databaseKind, embeddedDatabaseExists, embeddedTemplateExists, getDb } from "../db/client";
import { log } from "../lib/log";
import { checkSettingsOrExit, setting } from "../lib/settings";
import { drainable } from "./drain";
import { markDraining } from "./probes";
import { createLeanServer, onFirstUse, type NodeHandler } from "./lean-server";
import { startOperatorSocket, stopOperatorSocket } from "../cli/operator-socket";

(process.env as Record<string, string | undefined>).NODE_ENV ??= "production";
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

checkSettingsOrExit(); // a malformed setting stops the process here, named
const hostname = setting("HOST");
const port = setting("PORT");
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A slow client (headers, or the whole request with its body) is cut off after these. */
const headersTimeoutMs = setting("HTTP_HEADERS_TIMEOUT_MS");
const requestTimeoutMs = Math.max(setting("HTTP_REQUEST_TIMEOUT_MS"), headersTimeoutMs);
/** SIGTERM/SIGINT: how long requests and webhook attempts in flight get to finish before the process exits anyway. */
const shutdownTimeoutMs = setting("SHUTDOWN_TIMEOUT_MS");
/** SIGTERM/SIGINT: how long the front goes on serving while /readyz answers 503, so the load balancer stops sending first. */
const shutdownDelayMs = setting("SHUTDOWN_DELAY_MS");

async function main() {
  if (process.env.TDP_PREPARE_EMBEDDED_DB === "1") return prepareEmbeddedDatabase();
  // Without the build's template, a new embedded database is created (initdb, migrations) in a child.
  if (databaseKind() === "pglite" && !embeddedDatabaseExists() && !embeddedTemplateExists()) await prepareEmbeddedDatabaseInChild();
  // Opens the database (and, on the embedded default, takes its lock) before anything is served.
  await startServerProcess();
  // On the embedded database, a CLI command given beside this server runs here (PGlite allows one process).
  await startOperatorSocket().catch((err) => log.warn({ error: err }, "operator CLI socket not started: CLI commands wait until this server stops"));

  const server = createLeanServer({
    next: nextOnFirstUse(),
    origin: `http://${hostname}:${port}`,
    timeouts: { headersMs: headersTimeoutMs, requestMs: requestTimeoutMs },
  });
  server.keepAliveTimeout = 65_000; // above common load-balancer idle timeouts
  const http = drainable(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  log.info({ url: `http://${hostname}:${port}` }, "lean front listening");
  console.log(`Ready on http://${hostname}:${port}`);

  let stopping = false;
  // Graceful: fail readiness (and go on serving while the load balancer notices), stop taking work,
  // let what is in flight finish (bounded), then close and exit 0.
  const stop = async (signal: string) => {
    if (stopping) return; // a second signal (a terminal's Ctrl-C reaches `npm start` and this process alike)
    stopping = true;
    markDraining();
    if (shutdownDelayMs > 0) {
      log.info({ signal, delay_ms: shutdownDelayMs }, "lean front: not ready; serving on until the load balancer has noticed");
      await new Promise((resolve) => setTimeout(resolve, shutdownDelayMs));
    }
    const deadline = Date.now() + shutdownTimeoutMs;
    log.info({ signal, timeout_ms: shutdownTimeoutMs }, "lean front stopping");
    const [drained] = await Promise.all([http.drain(shutdownTimeoutMs), withDeadline(stopBackgroundWork(deadline), deadline)]);
    if (!drained) log.warn("lean front: requests still in flight at the shutdown deadline were cut off");
    await stopOperatorSocket().catch(() => {});
    // Releases the embedded database's lock; a clean exit also lets --cpu-prof write its profile.
    await withDeadline(closeServerProcess(), Date.now() + 5_000).catch((err) => log.warn({ error: err }, "lean front: close failed"));
    log.info("lean front stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/**
 * Without the build's template, a new embedded database is created (initdb) and migrated in a
 * short-lived child process: that work (and the demo tenant's week) grows PGlite's WebAssembly
 * memory to about 700 MB, which a process never gives back. The server then opens a ready database
 * at its everyday size.
 */
async function prepareEmbeddedDatabaseInChild(): Promise<void> {
  log.info({ dir: dataDir() }, "creating the embedded database");
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? fileURLToPath(import.meta.url)], {
    env: { ...process.env, TDP_PREPARE_EMBEDDED_DB: "1" },
    stdio: "inherit",
  });
  const code = await new Promise<number | null>((resolve, reject) => child.once("error", reject).once("exit", resolve));
  if (code !== 0) throw new Error(`creating the embedded database failed (exit code ${code})`);
}

/**
 * The child's whole work: open (create and migrate) the embedded database, seed the demo tenant,
 * release it, and exit at once (idle keep-alive sockets of the demo's traffic would hold the
 * process, and the server's start, for seconds). `npm run build` runs it with DEMO_SEED=0 to make
 * the template (scripts/build-server.mjs).
 */
async function prepareEmbeddedDatabase(): Promise<void> {
  await getDb();
  await seedDemoTenantIfEnabled();
  await closeDb();
  process.exit(0);
}

/**
 * Next (the dashboard's pages, the API reference page) is loaded at its first request rather than at
 * start: an API-only process never pays its memory (about 75 MB) or its start-up time, and a first
 * page view waits about a second once.
 */
function nextOnFirstUse(): NodeHandler {
  return onFirstUse(async () => {
    // Imported after NODE_ENV is settled: Next and React pick their production builds from it.
    const { default: next } = await import("next");
    const app = next({ dev: false, hostname, port, dir: projectRoot });
    await app.prepare();
    return app.getRequestHandler();
  });
}

/** Waits for `work` until `deadline` (epoch ms) at most; its failure is logged, not thrown. */
async function withDeadline(work: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
  await Promise.race([work.catch((err) => log.error({ error: err }, "lean front: stopping background work failed")), late]);
  clearTimeout(timer);
}

main().catch((err) => {
  log.error({ error: err }, "lean front failed to start");
  process.exit(1);
});
