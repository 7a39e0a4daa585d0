// The dashboard's tRPC endpoint as a plain `(Request) => Promise<Response>`.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "./router";
import type { DashboardIdentity } from "../trpc/trpc";
import { procedureType, proceduresOf } from "../trpc/internals";
import { AppError, badRequest, errorBody, toAppError } from "../lib/errors";
import { type RequestLog, withRequestLogger } from "../lib/log";
import { isTrustedOrigin } from "../dashboard/request-origin";
import { resolveDashboardIdentity } from "../dashboard/identity";
import { assertJsonContentType, readLimitedBody } from "../lib/request-body";
import { traceRequest } from "../observability/tracing";

const TRPC_ENDPOINT = "/api/trpc";
/** Calls in one batch request: each is a procedure call with its own queries and limiter decision. */
export const MAX_TRPC_BATCH = 20;

// A batched tRPC request runs several procedures over one Headers object: resolve the session once.
const identityOfRequest = new WeakMap<Headers, Promise<DashboardIdentity | null>>();

/** The signed-in dashboard user of a request (better-auth loads at the first call). */
function dashboardIdentityOf(headers: Headers): Promise<DashboardIdentity | null> {
  let identity = identityOfRequest.get(headers);
  if (!identity) identityOfRequest.set(headers, (identity = resolveDashboardIdentity(headers)));
  return identity;
}

/** What an HTTP method may call: queries are GETs, mutations POSTs (tRPC's own rule, said as a 4xx). */
const METHOD_OF_TYPE: Record<string, string> = { query: "GET", mutation: "POST" };

export async function handleTrpcRequest(req: Request): Promise<Response> {
  const requestId = randomUUID();
  // Every line logged while it runs carries its request id (server/lib/log.ts); with tracing on, the
  // request is a span named by the procedure it calls.
  return traceRequest(
    { method: req.method, target: req.url, headers: req.headers },
    TRPC_ROUTE,
    requestId,
    () => withRequestLogger(requestId, (logger) => answerTrpc(req, requestId, logger)),
    (answer) => ({ status: answer.status, route: trpcRouteOf(req.url) }),
  );
}

const TRPC_ROUTE = `${TRPC_ENDPOINT}/{procedure}`;

/** A span's route: the one procedure called (a name from the router, a fixed set), else the template. */
function trpcRouteOf(target: string): string {
  const paths = procedurePaths(new URL(target));
  return paths.length === 1 && typeOfProcedure(paths[0]) ? `${TRPC_ENDPOINT}/${paths[0]}` : TRPC_ROUTE;
}

async function answerTrpc(req: Request, requestId: string, logger: RequestLog): Promise<Response> {
  const resHeaders = new Headers({ "x-request-id": requestId });
  // Session cookies ride along on cross-site requests: a mutation must come from a trusted origin.
  if (req.method !== "GET" && req.method !== "HEAD" && !isTrustedOrigin(req.headers)) {
    return Response.json({ error: { code: "forbidden", message: "untrusted origin" } }, { status: 403, headers: resHeaders });
  }
  let trpcRequest: Request;
  try {
    trpcRequest = await boundedRequest(req);
  } catch (err) {
    const error = toAppError(err);
    for (const [name, value] of Object.entries(error.headers ?? {})) resHeaders.set(name, value);
    return Response.json(errorBody(error), { status: error.status, headers: resHeaders });
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: trpcRequest,
    router: appRouter,
    maxBatchSize: MAX_TRPC_BATCH,
    createContext: () => ({
      transport: "trpc" as const,
      headers: req.headers,
      requestId,
      logger,
      resHeaders,
      response: {},
      dashboardIdentity: () => dashboardIdentityOf(req.headers),
    }),
    responseMeta: ({ errors }) => {
      // An error's own headers (a 503's Retry-After) reach the client as they do on the REST surface.
      for (const error of errors) for (const [name, value] of Object.entries(toAppError(error).headers ?? {})) resHeaders.set(name, value);
      return { headers: resHeaders };
    },
    onError: ({ error, path }) => {
      // A 503 (database unreachable) is logged once per outage by the breaker (server/db/availability.ts), not per call.
      if (error.code === "INTERNAL_SERVER_ERROR" && toAppError(error).status !== 503) logger.error({ path, error: error.cause ?? error }, "trpc error");
    },
  });
}

/**
 * The request as tRPC may see it, or the 4xx that refuses it before any call runs: at most
 * MAX_TRPC_BATCH calls, each sent with its procedure's method; a POST body that is JSON and at most
 * 1 MiB (read here with that limit, then handed on whole: tRPC itself would buffer any size).
 */
async function boundedRequest(req: Request): Promise<Request> {
  if (req.method === "HEAD") return req; // tRPC answers it 204, calling nothing
  if (req.method !== "GET" && req.method !== "POST") {
    throw new AppError("bad_request", `method ${req.method} is not allowed here (queries are GET, mutations POST)`, {
      status: 405,
      headers: { Allow: "GET, POST" },
    });
  }
  const url = new URL(req.url);
  const paths = procedurePaths(url);
  if (paths.length > MAX_TRPC_BATCH) throw badRequest(`a batch holds at most ${MAX_TRPC_BATCH} calls (got ${paths.length})`);
  for (const path of paths) {
    const type = typeOfProcedure(path);
    // An unknown path is left to tRPC, which answers it 404.
    if (type && METHOD_OF_TYPE[type] !== req.method) {
      throw new AppError("bad_request", `'${path}' is a ${type}: send it as ${METHOD_OF_TYPE[type]}, not ${req.method}`, {
        status: 405,
        headers: { Allow: METHOD_OF_TYPE[type] },
      });
    }
  }
  if (req.method === "GET") return req;
  assertJsonContentType(req.headers.get("content-type"));
  const text = await readLimitedBody(req.headers.get("content-length"), req.body);
  if (text.trim()) {
    try {
      JSON.parse(text);
    } catch {
      throw badRequest("request body is not valid JSON");
    }
  }
  return new Request(req.url, { method: "POST", headers: req.headers, body: text, signal: req.signal });
}

/** The procedure paths one request calls: `a.b,c.d` with `?batch=1`, else the one path. */
function procedurePaths(url: URL): string[] {
  const raw = url.pathname.startsWith(`${TRPC_ENDPOINT}/`) ? url.pathname.slice(TRPC_ENDPOINT.length + 1) : "";
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return [raw];
  }
  return url.searchParams.get("batch") === "1" ? path.split(",") : [path];
}

/** `query` or `mutation` (the router's flat table of procedures by dotted path), or undefined for no procedure. */
function typeOfProcedure(path: string): string | undefined {
  const procedures = proceduresOf(appRouter);
  return Object.hasOwn(procedures, path) ? procedureType(procedures[path]) : undefined;
}
