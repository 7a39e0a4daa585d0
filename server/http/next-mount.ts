// What the lean front does around each request and at SIGTERM (server/http/main.ts), for the
// app-router route files under `next start`, which Next serves with its own HTTP server:
// - `nextRoute` wraps a route file's handler: the server process is started at the first request
//   (or the request is refused, 500, when another copy of the server's modules started it),
//   the request is timed into the HTTP request-duration histogram (by a fixed route label; the REST
//   bridges time themselves by their route template), and counted while it runs;
// - at the first request it also takes over SIGTERM/SIGINT from Next: `/readyz` answers 503 at
//   once, the process serves on for SHUTDOWN_DELAY_MS (the load balancer notices), waits for the
//   requests in flight and the background work (bounded by SHUTDOWN_TIMEOUT_MS), closes the metrics
//   listener, Redis and the database, then hands the signal to Next's own handler (which closes its
//   server and exits) or, when Next has none (NEXT_MANUAL_SIG_HANDLE), exits 0.
import { log } from "../lib/log";
import { setting } from "../lib/settings";
import { metricsEnabled, observeHttpRequest } from "../observability/metrics";
import { markDraining } from "./probes";
import { closeServerProcess, ServerProcessStartedElsewhere, startServerProcess, stopBackgroundWork } from "./startup";
import { AppError, errorBody, MESSAGES } from "../lib/errors";

type FetchHandler = (req: Request) => Promise<Response>;

let inFlight = 0;
let whenIdle: (() => void) | undefined;

/**
 * A route file's handler under `next start`. `route` is the histogram's route label (a fixed
 * template, or one worked out from the request, never a raw path); none for a handler that records
 * its own (the REST bridges).
 */
export function nextRoute(handle: FetchHandler, route?: string | ((req: Request) => string)): FetchHandler {
  return async (req) => {
    try {
      await startServerProcess();
    } catch (err) {
      if (!(err instanceof ServerProcessStartedElsewhere)) throw err;
      // This route bundle's copy of the server must not run beside the one that started (the lean
      // front serves every app/api route itself, so reaching here is a routing bug): refused, logged.
      log.error({ path: new URL(req.url).pathname, reason: err.message }, "next route refused");
      return Response.json(errorBody(new AppError("internal_error", MESSAGES.internal)), { status: 500 });
    }
    takeOverShutdownSignals();
    const startedAt = performance.now();
    inFlight++;
    try {
      const res = await handle(req);
      if (route !== undefined && metricsEnabled()) observeHttpRequest(typeof route === "string" ? route : route(req), req.method, res.status, startedAt);
      return res;
    } finally {
      if (--inFlight === 0) whenIdle?.();
    }
  };
}

/** Resolves once no request is in a route handler, or at `deadline` (epoch ms); true when idle. */
function requestsFinished(deadline: number): Promise<boolean> {
  if (inFlight === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    whenIdle = () => {
      clearTimeout(timer);
      resolve(true);
    };
  });
}

/** Process-wide, not per module instance: `next dev` may evaluate this module again (a reload), and the signals must be taken once. */
const SIGNALS_TAKEN = Symbol.for("tdp.next-mount.signals-taken");

/**
 * Once per process: SIGTERM and SIGINT run `shutDown`, which then calls the handlers Next had
 * registered for them (Next's closes its HTTP server and exits; its own would exit at once, before
 * the load balancer has seen /readyz fail).
 */
export function takeOverShutdownSignals(): void {
  const global = globalThis as { [SIGNALS_TAKEN]?: boolean };
  if (global[SIGNALS_TAKEN]) return;
  global[SIGNALS_TAKEN] = true;
  let stopping = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const nexts = process.listeners(signal);
    for (const listener of nexts) process.removeListener(signal, listener);
    // A second signal (a terminal's Ctrl-C after an orchestrator's SIGTERM) changes nothing, as on the lean front.
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void shutDown(signal, nexts);
    });
  }
}

async function shutDown(signal: NodeJS.Signals, nexts: NodeJS.SignalsListener[]): Promise<void> {
  markDraining();
  const delayMs = setting("SHUTDOWN_DELAY_MS");
  if (delayMs > 0) {
    log.info({ signal, delay_ms: delayMs }, "next start: not ready; serving on until the load balancer has noticed");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  const deadline = Date.now() + setting("SHUTDOWN_TIMEOUT_MS");
  log.info({ signal, in_flight: inFlight }, "next start: stopping");
  const [finished] = await Promise.all([
    requestsFinished(deadline),
    stopBackgroundWork(deadline).catch((err) => log.warn({ error: err }, "next start: background work did not stop cleanly")),
  ]);
  if (!finished) log.warn({ in_flight: inFlight }, "next start: requests still in flight at the shutdown deadline");
  await Promise.race([closeServerProcess(), new Promise((resolve) => setTimeout(resolve, 5_000))]).catch((err) =>
    log.warn({ error: err }, "next start: close failed"),
  );
  log.info("next start: stopped");
  if (nexts.length === 0) process.exit(0);
  for (const listener of nexts) listener(signal);
}
