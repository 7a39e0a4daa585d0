import { closeDb, databaseKind, getDb } from "../db/client";
import { log } from "../lib/log";
import { closeRateLimitStore, warmUpRateLimiter } from "../ratelimit";
import { checkSettings, setting } from "../lib/settings";
import { watchWebhookEngine } from "./probes";
import { startTracing, stopTracing } from "../observability/tracing";

let started: Promise<void> | undefined;
/** The demo tenant's seeding, which runs behind a ready server (see startServerProcess). */
let seeding: Promise<void> | undefined;

/**
 * Once per server process, by one copy of this module (any other copy is refused: see
 * PROCESS_STARTED_BY): at boot under `npm start`, at the first API request under `next start`
 * (app/_lib/server-route.ts). A start that fails before anything runs (the database unreachable at
 * the first request) is tried again by the next call: under `next start` the process lives on, and
 * a start remembered as failed would fail every request until a restart that nothing asks for.
 */
export function startServerProcess(): Promise<void> {
  if (!started) {
    const refused = claimTheProcess();
    if (refused) return Promise.reject(refused);
  }
  started ??= openDependencies().then(startBackgroundWork, (err) => {
    started = undefined;
    releaseTheProcess();
    throw err;
  });
  return started;
}

/**
 * Which copy of this module started the server process. Process-wide (a `Symbol.for` key on
 * globalThis), since a module-level flag is not: Next's route bundle and the compiled server are
 * separate module graphs, each with its own copy of this module (and of the database client, the
 * workers, the metrics listener). A second copy starting too would run every background job twice
 * and, on the embedded database, open a second writer on the same directory.
 */
const PROCESS_STARTED_BY = Symbol.for("tdp.server-process.started-by");
const THIS_COPY = Symbol("this copy of server/http/startup.ts");
type ProcessClaim = { [PROCESS_STARTED_BY]?: symbol };

export const STARTED_BY_ANOTHER_COPY =
  "the server process was already started in this process by another copy of the server's modules (a route Next served beside the lean front, or a `next dev` reload): nothing is started twice";

/** Takes the process for this copy; an error (nothing started) when another copy holds it. */
function claimTheProcess(): Error | undefined {
  const claim = globalThis as ProcessClaim;
  if (claim[PROCESS_STARTED_BY] !== undefined && claim[PROCESS_STARTED_BY] !== THIS_COPY) return new ServerProcessStartedElsewhere();
  claim[PROCESS_STARTED_BY] = THIS_COPY;
}

/** A start that failed before anything ran leaves the process to whichever copy tries next. */
function releaseTheProcess(): void {
  const claim = globalThis as ProcessClaim;
  if (claim[PROCESS_STARTED_BY] === THIS_COPY) delete claim[PROCESS_STARTED_BY];
}

export class ServerProcessStartedElsewhere extends Error {
  constructor() {
    super(STARTED_BY_ANOTHER_COPY);
    this.name = "ServerProcessStartedElsewhere";
  }
}

async function openDependencies(): Promise<void> {
  checkSettings(); // a malformed setting stops the process here, named, before anything is opened
  await startTracing(); // OTEL_EXPORTER_OTLP_ENDPOINT: before anything that makes spans
  await Promise.all([getDb(), warmUpRateLimiter()]);
}

/** What runs beside the requests; started once (a failure here is not retried: part of it may run). */
async function startBackgroundWork(): Promise<void> {
  watchWebhookEngine(await (await import("../webhooks/engine")).startWebhookEngine());
  (await import("../conversations/send-recovery")).startSendRecovery();
  (await import("../conversations/sla-monitor")).startSlaMonitor();
  (await import("../tools/tool-calls")).startToolCallPruning();
  (await import("../idempotency/idempotency")).startIdempotencyKeyPruning();
  (await import("../retention/retention-job")).startRetentionJob();
  // Seeded behind the ready server (a few seconds of provider traffic on a first embedded start):
  // nothing can refer to the demo tenant before its key and owner login are printed, at the end.
  seeding = seedDemoTenantIfEnabled().catch((err) => log.error({ error: err }, "seeding the demo tenant failed"));
  await (await import("./metrics-listener")).startMetricsListener(); // METRICS_PORT: Prometheus scrapes this process there
  log.info({ database: databaseKind() }, "server process ready");
}

/** On a fresh embedded database (or with DEMO_SEED=1): the demo tenant, its key printed that one time. */
export async function seedDemoTenantIfEnabled(): Promise<void> {
  const seed = setting("DEMO_SEED") ?? (databaseKind() === "pglite" ? "1" : "0");
  if (seed === "1") {
    const { seedDemoTenant } = await import("../demo/seed-demo");
    const demo = await seedDemoTenant();
    if (demo.apiKey) {
      // Printed once, at creation: the plaintext is not stored anywhere.
      console.log(
        `\nDemo tenant ${demo.tenantId} created.\nDemo API key (shown once): ${demo.apiKey}\n` +
          `Try: curl -H "Authorization: Bearer ${demo.apiKey}" http://127.0.0.1:${setting("PORT")}/api/v1/offerings\n`,
      );
      if (demo.owner) console.log(`Dashboard owner login (shown once): ${demo.owner.email} / ${demo.owner.password}\n`);
    } else {
      console.log(
        `Demo tenant ${demo.tenantId} is ready (its API key was shown when it was created; another: ` +
          `npm run cli -- key create --tenant ${demo.tenantId} --name mine --scopes read)`,
      );
    }
  }
}

/**
 * Graceful stop, first half: the background work this process started takes no new work and
 * finishes what it holds (the demo tenant's seeding; webhook attempts sent and recorded, or past
 * `deadline` (epoch ms) their leases released; a send-recovery sweep, an SLA check, a tool-call or
 * idempotency-key pruning in progress completed). The database stays open.
 */
export async function stopBackgroundWork(deadline: number): Promise<void> {
  if (!started) return;
  await started.catch(() => {});
  await seeding; // a demo tenant cut off halfway would never be seeded again (its slug exists)
  const [{ stopWebhookEngine }, { stopSendRecovery }, { stopSlaMonitor }, { stopToolCallPruning }, { stopIdempotencyKeyPruning }, { stopRetentionJob }] =
    await Promise.all([
      import("../webhooks/engine"),
      import("../conversations/send-recovery"),
      import("../conversations/sla-monitor"),
      import("../tools/tool-calls"),
      import("../idempotency/idempotency"),
      import("../retention/retention-job"),
    ]);
  await Promise.all([
    stopWebhookEngine(deadline),
    stopSendRecovery(),
    stopSlaMonitor(),
    stopToolCallPruning(),
    stopIdempotencyKeyPruning(),
    stopRetentionJob(),
  ]);
}

/** Graceful stop, second half (after requests and background work ended): the metrics listener, the rate-limit store, then the database (the embedded one's lock with it). */
export async function closeServerProcess(): Promise<void> {
  await (await import("./metrics-listener")).stopMetricsListener();
  await closeRateLimitStore().catch((err) => log.warn({ error: err }, "rate-limit store did not close cleanly"));
  await closeDb();
  await stopTracing().catch((err) => log.warn({ error: err }, "trace export did not finish cleanly")); // the last batch of spans
}
