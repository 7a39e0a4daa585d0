// Entry of the lean production front (`npm start` runs it through scripts/start.mjs):
// `node --import tsx server/http/main.ts`. HOST (default 127.0.0.1) and PORT (default 3000).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { closeServerProcess, startServerProcess, stopBackgroundWork } from "../startup";
import { log } from "../log";
import { checkSettingsOrExit, setting } from "../settings";
import { drainable } from "./drain";
import { createLeanServer } from "./lean-server";

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

async function main() {
  // Opens the database (and, on the embedded default, takes its lock) before anything is served.
  await startServerProcess();

  // Imported after NODE_ENV is settled: Next and React pick their production builds from it.
  const { default: next } = await import("next");
  const app = next({ dev: false, hostname, port, dir: projectRoot });
  await app.prepare();

  const server = createLeanServer({
    next: app.getRequestHandler(),
    origin: `http://${hostname}:${port}`,
    timeouts: { headersMs: headersTimeoutMs, requestMs: requestTimeoutMs },
  });
  server.keepAliveTimeout = 65_000; // above common load-balancer idle timeouts
  const http = drainable(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  log.info("lean front listening", { url: `http://${hostname}:${port}` });
  console.log(`Ready on http://${hostname}:${port}`);

  let stopping = false;
  // Graceful: stop taking work, let what is in flight finish (bounded), then close and exit 0.
  const stop = async (signal: string) => {
    if (stopping) return; // a second signal (a terminal's Ctrl-C reaches `npm start` and this process alike)
    stopping = true;
    const deadline = Date.now() + shutdownTimeoutMs;
    log.info("lean front stopping", { signal, timeout_ms: shutdownTimeoutMs });
    const [drained] = await Promise.all([
      http.drain(shutdownTimeoutMs),
      withDeadline(stopBackgroundWork(deadline), deadline),
    ]);
    if (!drained) log.warn("lean front: requests still in flight at the shutdown deadline were cut off");
    // Releases the embedded database's lock; a clean exit also lets --cpu-prof write its profile.
    await withDeadline(closeServerProcess(), Date.now() + 5_000).catch((err) => log.warn("lean front: close failed", { error: String(err) }));
    log.info("lean front stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/** Waits for `work` until `deadline` (epoch ms) at most; its failure is logged, not thrown. */
async function withDeadline(work: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
  await Promise.race([work.catch((err) => log.error("lean front: stopping background work failed", { error: String(err) })), late]);
  clearTimeout(timer);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
