// The lean production front: one node:http server that answers every API path (every route file
// under app/api) with the shared handlers directly and hands the rest to Next. The handlers are the
// same ones the app-router route files mount, so both fronts behave identically; this one skips
// Next's per-request route machinery (about 1 ms of CPU per request), and Next's route bundle, a
// second copy of the server's modules, is never loaded beside it (server/http/startup.ts refuses
// to start the server process twice in one process).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { handleTrpcRequest } from "./trpc-handler";
// As in app/api/trpc/[trpc]/route.ts: lets dashboard procedures resolve the signed-in user.
import { AppError, errorBody, MESSAGES } from "../lib/errors";
import { log } from "../lib/log";
import { sendFetchResponse, toFetchRequest } from "./fetch-bridge";
import { forwardResolvedClientIp } from "../lib/client-ip";
import { answerRestFromNode } from "./node-rest";
import { answerAgentFromNode } from "./agent-rest";
import { answerProbeFromNode } from "./probes";
import { metricsEnabled, observeHttpRequest } from "../observability/metrics";

type FetchHandler = (req: Request) => Promise<Response>;
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
export type Mount = "rest" | "docs" | "agent" | "mcp" | "trpc" | "inngest" | "webhooks" | "auth" | "export" | "probe" | "next";

/**
 * THE routing decision: which handler answers a path. Every route file under app/api is answered
 * here (tests/http/every_app_api_route_is_served_by_the_lean_front.test.ts derives the list from
 * app/api), so Next never loads a second copy of the server's modules in this process; Next has the
 * rest (pages, the reference UI's bundle, static assets, 404s).
 */
export function mountFor(pathname: string): Mount {
  // Next answers a trailing slash with a 308 to the canonical path: let it, on both fronts.
  if (pathname.length > 1 && pathname.endsWith("/")) return "next";
  // Liveness and readiness (probes.ts): answered before anything else, with no key, limit or log.
  if (pathname === "/healthz" || pathname === "/readyz") return "probe";
  if (pathname === "/api/v1" || pathname.startsWith("/api/v1/")) {
    // The interactive reference page (server/http/api-reference.ts).
    return pathname === "/api/v1/docs" ? "docs" : "rest";
  }
  // The assistant's tools: the same bridge over the agent router, and MCP (server/tools/).
  if (pathname === "/api/agent/v1" || pathname.startsWith("/api/agent/v1/")) return "agent";
  if (pathname === "/api/agent/mcp") return "mcp";
  if (pathname.startsWith("/api/trpc/")) return "trpc";
  if (pathname === "/api/inngest") return "inngest";
  // The providers' receivers: served here rather than through Next's route machinery, since inbound
  // traffic is the busiest write path (the Next route file mounts the same handler).
  if (pathname.startsWith("/api/webhooks/")) return "webhooks";
  // Dashboard sign-in (better-auth). Answered here so that Next's bundle never loads the server's
  // domain code: each server module is then live once in this process.
  if (pathname.startsWith("/api/auth/")) return "auth";
  // The owner's download of the whole tenant (server/export/export-download.ts).
  if (pathname === "/api/dashboard/export") return "export";
  return "next";
}

export type LeanServerOptions = {
  /** Next's request handler (`app.getRequestHandler()`); answers everything not mounted here. */
  next: NodeHandler;
  /** Origin used to build request URLs when a client sends no Host header. */
  origin: string;
  /**
   * How long a client may take to send a request's headers, and the whole request (body included),
   * before the connection is answered 408 and closed (Node defaults: 60 s and 300 s).
   */
  timeouts?: { headersMs: number; requestMs: number };
};

function pathnameOf(url: string | undefined): string {
  if (!url || url.charCodeAt(0) !== 47 /* "/" */) return ""; // absolute-form or empty: Next decides
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** Runs a mounted handler; a failure it did not turn into a response answers a generic 500. */
async function answerWith(handler: NodeHandler, req: IncomingMessage, res: ServerResponse) {
  try {
    await handler(req, res);
  } catch (err) {
    // The shared handlers turn every failure into a response; reaching here is a transport failure.
    log.error({ path: pathnameOf(req.url), error: err }, "lean front: handler failed");
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(new AppError("internal_error", MESSAGES.internal))));
    } else {
      res.destroy();
    }
  }
}

/**
 * A handler whose code is loaded at its first request (a failed load is tried again at the next).
 * Once loaded it is called directly: a request waits on no promise of the load.
 */
export function onFirstUse(load: () => Promise<NodeHandler>): NodeHandler {
  let loaded: NodeHandler | undefined;
  let loading: Promise<NodeHandler> | undefined;
  return (req, res) => {
    if (loaded) return loaded(req, res);
    loading ??= load().then(
      (handler) => (loaded = handler),
      (err) => {
        loading = undefined;
        throw err;
      },
    );
    return loading.then((handler) => handler(req, res));
  };
}

/** The HTTP metrics' route label of the mounts that do not time themselves (a fixed set: never a raw path). */
const ROUTE_OF_MOUNT = {
  trpc: "/api/trpc/{procedure}",
  mcp: "/api/agent/mcp",
  inngest: "/api/inngest",
  auth: "/api/auth/{action}",
  export: "/api/dashboard/export",
  docs: "/api/v1/docs",
  // Dashboard pages, the reference UI's bundle, static assets and Next's 404s.
  next: "{next}",
} as const;

function timeUntilFinished(req: IncomingMessage, res: ServerResponse, route: string) {
  const startedAt = performance.now();
  res.once("finish", () => observeHttpRequest(route, req.method, res.statusCode, startedAt));
}

export function createLeanServer(options: LeanServerOptions): Server {
  // The REST bridges and the receivers answer node:http directly; the others are Fetch handlers.
  const fetchHandler =
    (handler: FetchHandler): NodeHandler =>
    async (req, res) =>
      sendFetchResponse(res, await handler(toFetchRequest(req, res, options.origin)));
  const handlers: Record<Exclude<Mount, "next" | "probe">, NodeHandler> = {
    rest: answerRestFromNode,
    agent: answerAgentFromNode,
    trpc: fetchHandler(handleTrpcRequest),
    // Loaded at their first request (their packages cost memory a process may never need).
    mcp: onFirstUse(async () => fetchHandler((await import("./mcp")).handleMcpRequest)),
    inngest: onFirstUse(async () => fetchHandler((await import("../webhooks/inngest-engine")).handleInngestRequest)),
    // The receivers answer node:http directly too (the busiest write path: no Fetch objects per request).
    webhooks: onFirstUse(async () => (await import("./node-receivers")).answerWebhookFromNode(options.origin)),
    auth: onFirstUse(async () => fetchHandler((await import("../dashboard/auth")).answerAuthRequest)),
    export: onFirstUse(async () => fetchHandler((await import("../export/export-download")).answerExportDownload)),
    docs: onFirstUse(async () => fetchHandler((await import("./api-reference")).answerApiReferencePage)),
  };
  const timeouts = options.timeouts && {
    headersTimeout: options.timeouts.headersMs,
    requestTimeout: options.timeouts.requestMs,
    // Node enforces both only when it checks its connections (default every 30 s): check each second.
    connectionsCheckingInterval: 1_000,
  };
  return createServer(timeouts ?? {}, (req, res) => {
    const mount = mountFor(pathnameOf(req.url));
    if (mount === "probe") return void answerWith(answerProbeFromNode, req, res);
    // The REST bridges and the receivers time their requests themselves (by route template).
    if (metricsEnabled() && mount !== "rest" && mount !== "agent" && mount !== "webhooks") timeUntilFinished(req, res, ROUTE_OF_MOUNT[mount]);
    // Handlers without the socket (Next, the Fetch mounts) read the address this front resolved.
    if (mount !== "rest" && mount !== "agent" && mount !== "webhooks") forwardResolvedClientIp(req);
    if (mount !== "next") void answerWith(handlers[mount], req, res);
    else
      void Promise.resolve(options.next(req, res)).catch((err) => {
        log.error({ error: err }, "lean front: next handler failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
  });
}
