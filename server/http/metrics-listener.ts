// The Prometheus endpoint: `GET /metrics` on a listener of its own (METRICS_HOST:METRICS_PORT,
// 127.0.0.1 by default), never on the port tenants reach. With METRICS_TOKEN set it also wants
// `Authorization: Bearer <token>` (for a listener bound beyond loopback). Unset METRICS_PORT: no
// listener, and nothing is recorded (server/observability/metrics.ts). Each scrape is rendered by
// prom-client's registry (`registry.metrics()`), its content type the registry's.
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { databaseKnownDown } from "../db/availability";
import { databaseIfOpen } from "../db/database";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import type { Registry } from "prom-client";
import { enableMetrics, setScrapeSources } from "../observability/metrics";
import { readDeliveryBacklog } from "../webhooks/delivery-backlog";
import { readiness, sharedLimitStoreKind, within } from "./probes";

let listener: Server | null = null;

/** The backlog read at scrape time, bounded like a readiness check; nothing while the database is down. */
async function webhookBacklog() {
  const sql = databaseIfOpen()?.planned;
  if (!sql || databaseKnownDown()) return null;
  return within(readDeliveryBacklog(sql), setting("READINESS_TIMEOUT_MS"));
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Whether the request carries the token (any request, when none is set); compared in constant time. */
function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const given = req.headers.authorization ?? "";
  return given.startsWith("Bearer ") && timingSafeEqual(digest(given.slice(7)), digest(token));
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers }).end(body);
}

/** `/metrics` (GET or HEAD, with the token when one is set); 404 elsewhere, 405 for other methods. */
function answer(req: IncomingMessage, res: ServerResponse, token: string | undefined, registry: Registry): void {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/metrics") send(res, 404, "not found: metrics are at /metrics\n");
  else if (req.method !== "GET" && req.method !== "HEAD") send(res, 405, "use GET\n", { allow: "GET, HEAD" });
  else if (!authorized(req, token)) send(res, 401, "a bearer token is required (METRICS_TOKEN)\n", { "www-authenticate": 'Bearer realm="metrics"' });
  else
    registry.metrics().then(
      (text) => send(res, 200, text, { "content-type": registry.contentType }),
      (err) => {
        log.error({ error: err }, "metrics: rendering failed");
        send(res, 500, "metrics could not be rendered\n");
      },
    );
}

/** Starts the listener when METRICS_PORT is set (once per process); resolves once it listens. */
export async function startMetricsListener(): Promise<void> {
  const port = setting("METRICS_PORT");
  if (port === undefined || listener) return;
  const host = setting("METRICS_HOST");
  const token = setting("METRICS_TOKEN");
  setScrapeSources({ sharedLimitStore: sharedLimitStoreKind, webhookBacklog, readiness });
  const registry = await enableMetrics();
  const server = createServer((req, res) => answer(req, res, token, registry));
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
  // Idle, it keeps no process alive: the front's own listener does.
  server.unref();
  listener = server;
  log.info({ url: `http://${host}:${port}/metrics` }, "metrics listening");
}

/** Closes the listener and its connections (graceful stop, after the front drained). */
export async function stopMetricsListener(): Promise<void> {
  const server = listener;
  listener = null;
  if (!server) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
