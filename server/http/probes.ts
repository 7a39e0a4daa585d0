// The probes a load balancer and an orchestrator ask, at the root (not under /api/v1, not in the
// OpenAPI document): `/healthz` (liveness: the process answers; nothing else is checked) and
// `/readyz` (readiness: send this process traffic?). Neither needs a key, neither is rate-limited,
// logged or counted in the HTTP metrics. Both fronts serve them: the lean front from node:http,
// `next start` through app/healthz and app/readyz.
//
// /readyz fails (503) while: the process drains after SIGTERM; PostgreSQL does not answer
// `SELECT 1` within READINESS_TIMEOUT_MS; migrations this code needs are not applied; the webhook
// engine this process should run is not running. The rate-limit store is reported but never fails
// it: limits fail open to this process's memory (server/ratelimit/fallback-store.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { databaseKnownDown } from "../db/availability";
import { probeSqlIfOpen } from "../db/client";
import { AppError, errorBody } from "../lib/errors";
import { isDatabaseUnavailable } from "../lib/database-errors";
import { setting } from "../lib/settings";
import { rateLimitStoreDown, type Readiness } from "../observability/metrics";
import { rateLimitConfigFromEnv } from "../ratelimit/config";
import type { DeliveryWorker } from "../webhooks/embedded-worker";

/** This process's webhook engine (startup.ts registers it): undefined until started, null with WEBHOOK_ENGINE=off. */
let webhookEngine: DeliveryWorker | null | undefined;

export function watchWebhookEngine(engine: DeliveryWorker | null): void {
  webhookEngine = engine;
}

/** For /readyz: `ok` (running), `off` (WEBHOOK_ENGINE=off), `starting` or `stopped`. */
function webhookEngineState(): "ok" | "off" | "starting" | "stopped" {
  if (webhookEngine === undefined) return "starting";
  if (webhookEngine === null) return "off";
  return webhookEngine.isRunning ? "ok" : "stopped";
}

let draining = false;
/** From SIGTERM on (server/http/main.ts): /readyz answers 503 so the load balancer stops sending traffic. */
export function markDraining(): void {
  draining = true;
}

class ProbeTimeout extends Error {}

/** `work`, or a ProbeTimeout after `ms`. */
export function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const SELECT_1 = { text: "SELECT 1 AS one" };
/** Once every migration was seen applied it stays so: later probes ask only `SELECT 1`. */
let migrationsCurrent = false;

/** `ok`, `timeout` (no answer within READINESS_TIMEOUT_MS) or `unreachable`; then the migrations, asked through the same pool (either failing reads as not ready). */
async function checkDatabase(): Promise<{ database: string; migrations: string }> {
  const sql = probeSqlIfOpen();
  // The breaker knows the server is down (its probe is asking): no query would get through.
  if (!sql || databaseKnownDown()) return { database: "unreachable", migrations: "unknown" };
  const timeoutMs = setting("READINESS_TIMEOUT_MS");
  try {
    await within(sql(SELECT_1, []), timeoutMs);
    if (!migrationsCurrent) {
      const { hasPendingMigrations } = await import("../db/schema-engine");
      let unavailable: unknown = null;
      const pending = await within(
        hasPendingMigrations(async (text) =>
          sql<{ migration_name: string }>({ text }, []).catch((err) => {
            if (isDatabaseUnavailable(err)) unavailable = err;
            throw err;
          }),
        ),
        timeoutMs,
      );
      if (unavailable) throw unavailable;
      migrationsCurrent = !pending;
    }
    return { database: "ok", migrations: migrationsCurrent ? "ok" : "pending" };
  } catch (err) {
    return { database: err instanceof ProbeTimeout ? "timeout" : "unreachable", migrations: "unknown" };
  }
}

/** The shared rate-limit store's kind, or null when limits are counted in this process's memory only. */
export function sharedLimitStoreKind(): string | null {
  const kind = rateLimitConfigFromEnv().store.kind;
  return kind === "memory" ? null : kind;
}

/** `ok` (answering), `down` (limits counted in memory meanwhile), `memory` (no shared store) or `disabled`. */
function rateLimitStoreState(): string {
  if (setting("RATE_LIMIT_DISABLED")) return "disabled";
  if (!sharedLimitStoreKind()) return "memory";
  return rateLimitStoreDown() ? "down" : "ok";
}

async function evaluate(): Promise<Readiness> {
  if (draining) return { ready: false, checks: { shutdown: { value: "draining", failing: true } } };
  const { database, migrations } = await checkDatabase();
  const engine = webhookEngineState();
  const checks = {
    shutdown: { value: "ok", failing: false },
    database: { value: database, failing: database !== "ok" },
    // Unknown while the database is down: that check already names the failure.
    migrations: { value: migrations, failing: migrations === "pending" },
    // `off`: WEBHOOK_ENGINE=off, this process is not meant to deliver.
    webhook_engine: { value: engine, failing: engine !== "ok" && engine !== "off" },
    rate_limit_store: { value: rateLimitStoreState(), failing: false },
  };
  return { ready: Object.values(checks).every((c) => !c.failing), checks };
}

let evaluating: Promise<Readiness> | null = null;
/** This process's readiness; concurrent callers (probes, a scrape) share one evaluation. */
export function readiness(): Promise<Readiness> {
  evaluating ??= evaluate().finally(() => {
    evaluating = null;
  });
  return evaluating;
}

type ProbeAnswer = { status: number; headers: Record<string, string>; body: string };
const HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

function answer(status: number, body: unknown, headers: Record<string, string> = {}): ProbeAnswer {
  return { status, headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** `/healthz` or `/readyz` answered (transport-neutral). */
export async function probeAnswer(path: string, method: string): Promise<ProbeAnswer> {
  if (method !== "GET" && method !== "HEAD") {
    return answer(405, errorBody(new AppError("bad_request", `method ${method} not allowed on ${path}; use GET`, { status: 405 })), { allow: "GET, HEAD" });
  }
  if (path === "/healthz") return answer(200, { status: "ok" });
  const { ready, checks } = await readiness();
  const failing = Object.entries(checks)
    .filter(([, c]) => c.failing)
    .map(([name]) => name);
  return answer(ready ? 200 : 503, {
    status: ready ? "ready" : "not_ready",
    failing,
    checks: Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, c.value])),
  });
}

/** The lean front's mount. */
export async function answerProbeFromNode(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const answered = await probeAnswer(q === -1 ? url : url.slice(0, q), req.method ?? "GET");
  res.writeHead(answered.status, { ...answered.headers, "content-length": String(Buffer.byteLength(answered.body)) }).end(answered.body);
}
