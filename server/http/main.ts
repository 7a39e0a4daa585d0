// Entry of the lean production front (`npm start` runs it through scripts/start.mjs):
// `node --import tsx server/http/main.ts`. HOST (default 127.0.0.1) and PORT (default 3000).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServerProcess } from "../startup";
import { closeDb } from "../db/client";
import { log } from "../log";
import { createLeanServer } from "./lean-server";

(process.env as Record<string, string | undefined>).NODE_ENV ??= "production";
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

const hostname = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function main() {
  // Opens the database (and, on the embedded default, takes its lock) before anything is served.
  await startServerProcess();

  // Imported after NODE_ENV is settled: Next and React pick their production builds from it.
  const { default: next } = await import("next");
  const app = next({ dev: false, hostname, port, dir: projectRoot });
  await app.prepare();

  const server = createLeanServer({ next: app.getRequestHandler(), origin: `http://${hostname}:${port}` });
  server.keepAliveTimeout = 65_000; // above common load-balancer idle timeouts
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  log.info("lean front listening", { url: `http://${hostname}:${port}` });
  console.log(`Ready on http://${hostname}:${port}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("lean front stopping", { signal });
    server.close();
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
    // Releases the embedded database's lock; a clean exit also lets --cpu-prof write its profile.
    await closeDb().catch(() => {});
    process.exit(0);
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
