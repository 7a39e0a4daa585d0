// The Prometheus endpoint: `GET /metrics` on a listener of its own (METRICS_HOST:METRICS_PORT,
// 127.0.0.1 by default), never on the port tenants reach. With METRICS_TOKEN set it also wants
// `Authorization: Bearer <token>` (for a listener bound beyond loopback). Unset METRICS_PORT: no
// listener, and nothing is recorded (server/observability/metrics.ts).
//
// The listener's HTTP server runs in a worker thread; for each scrape it asks this thread for the
// exposition text (the registry lives here) and sends it. Served from this thread, each scrape's
// request and response objects met the optimized code of Node's http internals that the served
// requests run, which threw it away: with a scrape a second, the listener's HTTP part alone made
// every request cost about 5% more CPU (docs/perf/2026-11-metrics-and-tracing-cost.md).
import type { Worker } from "node:worker_threads";
import { databaseKnownDown } from "../db/availability";
import { probeSqlIfOpen } from "../db/client";
import { startEvalWorker } from "../lib/eval-worker";
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import { enableMetrics, registry, renderMetrics, setScrapeSources } from "../observability/metrics";
import { readDeliveryBacklog } from "../webhooks/delivery-backlog";
import { readiness, sharedLimitStoreKind, within } from "./probes";

let listener: Worker | null = null;

/**
 * The worker's program: an HTTP server on `host:port` answering `/metrics` (GET or HEAD, with the
 * token when one is set) with the text the main thread renders for each scrape (`{ id }` asked,
 * `{ id, text }` or `{ id, failed }` answered); `{ close: true }` closes it and its connections.
 */
const LISTENER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { createServer } = require("node:http");
const { createHash, timingSafeEqual } = require("node:crypto");
const { host, port, token, contentType } = workerData;
const digest = (text) => createHash("sha256").update(text).digest();
const authorized = (req) => {
  if (!token) return true;
  const given = req.headers.authorization ?? "";
  return given.startsWith("Bearer ") && timingSafeEqual(digest(given.slice(7)), digest(token));
};
const waiting = new Map();
let nextId = 0;
const server = createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0];
  const send = (status, body, headers = {}) =>
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers }).end(body);
  if (path !== "/metrics") return send(404, "not found: metrics are at /metrics\\n");
  if (req.method !== "GET" && req.method !== "HEAD") return send(405, "use GET\\n", { allow: "GET, HEAD" });
  if (!authorized(req)) return send(401, "a bearer token is required (METRICS_TOKEN)\\n", { "www-authenticate": 'Bearer realm="metrics"' });
  const id = nextId++;
  waiting.set(id, (answer) => (answer.failed ? send(500, "metrics could not be rendered\\n") : send(200, answer.text, { "content-type": contentType })));
  parentPort.postMessage({ id });
});
parentPort.on("message", (message) => {
  if (message.close) {
    server.close(() => parentPort.postMessage({ closed: true }));
    server.closeAllConnections();
    return;
  }
  const answer = waiting.get(message.id);
  waiting.delete(message.id);
  answer?.(message);
});
server.once("error", (err) => parentPort.postMessage({ failed: err.message }));
server.listen(port, host, () => parentPort.postMessage({ ready: true }));
`;

/** The backlog read at scrape time, bounded like a readiness check; nothing while the database is down. */
async function webhookBacklog() {
  const sql = probeSqlIfOpen();
  if (!sql || databaseKnownDown()) return null;
  return within(readDeliveryBacklog(sql), setting("READINESS_TIMEOUT_MS"));
}

/** Starts the listener when METRICS_PORT is set (once per process); resolves once it listens. */
export async function startMetricsListener(): Promise<void> {
  const port = setting("METRICS_PORT");
  if (port === undefined || listener) return;
  const host = setting("METRICS_HOST");
  setScrapeSources({ sharedLimitStore: sharedLimitStoreKind, webhookBacklog, readiness });
  enableMetrics();
  const worker = await startEvalWorker(LISTENER_SOURCE, { host, port, token: setting("METRICS_TOKEN"), contentType: registry.contentType });
  worker.on("message", (message: { id?: number }) => {
    const { id } = message;
    if (id === undefined) return;
    renderMetrics().then(
      (text) => worker.postMessage({ id, text }),
      (err) => {
        log.error("metrics: rendering failed", { error: err });
        worker.postMessage({ id, failed: true });
      },
    );
  });
  listener = worker;
  log.info("metrics listening", { url: `http://${host}:${port}/metrics` });
}

/** Closes the listener (graceful stop, after the front drained). */
export async function stopMetricsListener(): Promise<void> {
  const worker = listener;
  listener = null;
  if (!worker) return;
  const closed = new Promise<void>((resolve) => worker.on("message", (message: { closed?: boolean }) => message.closed && resolve()));
  worker.postMessage({ close: true });
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  await worker.terminate();
}
