// The Prometheus endpoint: `GET /metrics` on a listener of its own (METRICS_HOST:METRICS_PORT,
// 127.0.0.1 by default), never on the port tenants reach. With METRICS_TOKEN set it also wants
// `Authorization: Bearer <token>` (for a listener bound beyond loopback). Unset METRICS_PORT: no
// listener, and nothing is recorded (server/observability/metrics.ts).
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { databaseKnownDown } from "../db/availability";
import { readSqlIfOpen } from "../db/client";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import { enableMetrics, registry, renderMetrics, setScrapeSources } from "../observability/metrics";
import { readDeliveryBacklog } from "../webhooks/delivery-backlog";
import { readiness, sharedLimitStoreKind, within } from "./probes";

let listener: Server | null = null;

const digest = (text: string) => createHash("sha256").update(text).digest();

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const given = req.headers.authorization ?? "";
  return given.startsWith("Bearer ") && timingSafeEqual(digest(given.slice(7)), digest(token));
}

/** The backlog read at scrape time, bounded like a readiness check; nothing while the database is down. */
async function webhookBacklog() {
  const sql = readSqlIfOpen();
  if (!sql || databaseKnownDown()) return null;
  return within(readDeliveryBacklog(sql), setting("READINESS_TIMEOUT_MS"));
}

/** Starts the listener when METRICS_PORT is set (once per process); resolves once it listens. */
export async function startMetricsListener(): Promise<void> {
  const port = setting("METRICS_PORT");
  if (port === undefined || listener) return;
  const host = setting("METRICS_HOST");
  const token = setting("METRICS_TOKEN");
  setScrapeSources({ sharedLimitStore: sharedLimitStoreKind, webhookBacklog, readiness });
  enableMetrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, body: string, headers: Record<string, string> = {}) =>
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers }).end(body);
    if (path !== "/metrics") return send(404, "not found: metrics are at /metrics\n");
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "use GET\n", { allow: "GET, HEAD" });
    if (!authorized(req, token)) return send(401, "a bearer token is required (METRICS_TOKEN)\n", { "www-authenticate": 'Bearer realm="metrics"' });
    renderMetrics().then(
      (text) => send(200, text, { "content-type": registry.contentType }),
      (err) => {
        log.error("metrics: rendering failed", { error: err });
        send(500, "metrics could not be rendered\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.unref(); // the process's life is the HTTP front's, not this listener's
  listener = server;
  log.info("metrics listening", { url: `http://${host}:${port}/metrics` });
}

/** Closes the listener (graceful stop, after the front drained). */
export async function stopMetricsListener(): Promise<void> {
  const server = listener;
  listener = null;
  if (!server) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
