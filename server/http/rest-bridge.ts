// The /api/v1 REST contract over the tRPC router: `answerRestRequest` takes a request as any server
// has it (method, target, headers, body chunks) and gives back the complete answer. The Next route
// file mounts it as a Fetch handler (`handleRestRequest`); the lean front calls it straight from
// node:http (server/http/node-rest.ts), without building Fetch objects per request. Routes come from each
// procedure's trpc-to-openapi `openapi` meta; the table is built once per process.
// `createRestBridge` serves another router under another base path with the very same contract
// (the assistant's tools at /api/agent/v1, server/http/agent-rest.ts).
//
// It replaces trpc-to-openapi's own fetch adapter, whose behaviour breaks this contract: it rebuilds
// its route table per request, shapes error bodies its own way, spreads non-object JSON bodies into
// the input, coerces by rewriting the zod schemas in place (bodies and the dashboard endpoint
// included) and sends an unexpected exception's message to the client.
import { getPathRegExp, normalizePath, type OpenApiProcedure } from "trpc-to-openapi";
import { AppError, badRequest, errorBody, notFound, toAppError } from "../lib/errors";
import { type RequestLog, requestIdOf, withRequestLogger } from "../lib/log";
import { appRouter } from "./router";
import type { AnyRouter } from "@trpc/server";
import { callProcedure, forEachOpenApiProcedureOf, numericFields, procedureInput, procedureMeta, procedureType } from "../trpc/internals";
import { resolveClientIp } from "../lib/client-ip";
import type { HeaderReader, RequestContext } from "../trpc/trpc";
import { assertJsonContentType, readLimitedBody, type RequestBody } from "../lib/request-body";
import { assertBoundedInput } from "../lib/bounded-input";
import { getOpenApiDocument } from "./openapi";
import { observeHttpRequest } from "../observability/metrics";
import { traceRequest } from "../observability/tracing";

const identity = (answer: RestAnswer) => answer;

const API_BASE_PATH = "/api/v1";

type Route = {
  method: string;
  pattern: RegExp;
  /** Dotted router path and the procedure itself, called with a lazily read input (see answerRestRequest). */
  procedurePath: string;
  procedure: OpenApiProcedure;
  pathParams: string[];
  /** The route's template under the base path (`/api/v1/offerings/{id}`): the HTTP metrics' route label. */
  template: string;
  /** Query parameters whose schema is a number: their string values are converted before validation. */
  numericQuery: Set<string>;
  successStatus: number;
};

type RouteTable = {
  /** In matching order. */
  routes: Route[];
  /**
   * Routes without parameters that no route before them matches, by method and lower-cased path (the
   * patterns ignore case): a plain path finds its route here without trying the patterns in turn.
   */
  literal: Map<string, Route>;
};

function buildRouteTable(router: AnyRouter, basePath: string): RouteTable {
  const routes: Route[] = [];
  forEachOpenApiProcedureOf(router, ({ path, procedure, meta }) => {
    const openapi = meta.openapi;
    const numericQuery = new Set(openapi.method === "GET" ? numericFields(procedureInput(procedure)) : []);
    const routePath = normalizePath(openapi.path);
    routes.push({
      method: openapi.method,
      pattern: getPathRegExp(routePath),
      procedurePath: path,
      procedure,
      pathParams: [...routePath.matchAll(/\{(.+?)\}/g)].map((m) => m[1]),
      template: basePath + routePath,
      numericQuery,
      successStatus: meta.successStatus ?? 200,
    });
  });
  // Literal segments before parameters, so `/conversations/{id}/messages` never loses to a looser pattern.
  routes.sort((a, b) => b.pattern.source.length - a.pattern.source.length);
  const literal = new Map<string, Route>();
  routes.forEach((route, i) => {
    const path = route.template.slice(basePath.length);
    if (route.pathParams.length > 0 || !PLAIN_PATH.test(path)) return;
    if (routes.slice(0, i).some((earlier) => earlier.method === route.method && earlier.pattern.test(path))) return;
    literal.set(`${route.method} ${path.toLowerCase()}`, route);
  });
  return { routes, literal };
}

type Match = { route: Route; params: Record<string, string> } | null;

function matchIn({ routes, literal }: RouteTable, method: string, path: string): Match {
  // Only a plain path (ASCII letters, digits, `_`, `-`): its lower case is the one the patterns ignore.
  if (PLAIN_PATH.test(path)) {
    const route = literal.get(`${method} ${path.toLowerCase()}`);
    if (route) return { route, params: {} };
  }
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (m) return { route, params: { ...(m.groups ?? {}) } };
  }
  return null;
}

function queryInput(searchParams: URLSearchParams | null, route: Route): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key of new Set(searchParams?.keys())) {
    const values = searchParams!.getAll(key);
    if (values.length > 1) throw badRequest(`invalid field '${key}': given more than once`, key);
    const value = values[0];
    // Only numeric-looking strings become numbers; anything else reaches the schema as a string
    // and fails there with a message naming the parameter.
    input[key] = route.numericQuery.has(key) && /^-?\d+(\.\d+)?$/.test(value) ? queryNumber(value) : value;
  }
  // NUL (`%00`) would reach SQL as text PostgreSQL refuses: a 400 naming the parameter instead.
  assertBoundedInput(input);
  return input;
}

/**
 * An integer of any length stays an integer: beyond the safe range it saturates (so `limit=1e23`
 * written out in digits is capped like any large limit, and a bounded parameter says its bounds)
 * instead of becoming an unsafe or infinite number the schema would call "not an integer".
 */
function queryNumber(text: string): number {
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || Number.isSafeInteger(n)) return n;
  return n < 0 ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
}

/** What the REST contract reads of a request, whichever server received it. */
export type RestRequest = {
  method: string;
  /** The request target: a path with its query ("/api/v1/offerings?limit=20") or an absolute URL. */
  target: string;
  /** Case-insensitive header lookup, as the mounting server parsed the headers (node's rules on both fronts). */
  headers: HeaderReader;
  /**
   * The body's bytes, chunk by chunk. Read only once the caller is authenticated, admitted by the
   * limiter and authorized; the bridge stops reading (and calls `return`) past 1 MiB.
   */
  body: RequestBody | null;
  /** The socket's remote address, when the server has one (the lean front); see server/lib/client-ip.ts. */
  remoteAddress?: string | null;
};
/**
 * The answer, always complete JSON text (or none): the server writes it in one go with its length.
 * `route` is the matched route's template (`/api/v1/offerings/{id}`, or `<base>/{unmatched}`), never the raw path.
 */
export type RestAnswer = { status: number; headers: Record<string, string>; body: string; route: string };

const NOT_BLANK = /\S/;

async function bodyInput(req: RestRequest, route: Route): Promise<Record<string, unknown>> {
  assertJsonContentType(req.headers.get("content-type"));
  const text = await readLimitedBody(req.headers.get("content-length"), req.body);
  // (`\S`: exactly what trim() keeps, without copying the body to find out.)
  if (!NOT_BLANK.test(text)) throw badRequest("request body is required (a JSON object)");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("request body is not valid JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest("request body must be a JSON object");
  }
  for (const param of route.pathParams) {
    if (param in body) throw badRequest(`unknown field '${param}': it is given by the path, not the body`);
  }
  // Depth, NUL and lone surrogates: a 400 naming the field, never a stack overflow or an SQL error.
  // (JSON.parse itself is not recursive in V8: a 1 MiB body nested 500,000 deep parses fine.)
  assertBoundedInput(body);
  return body as Record<string, unknown>;
}

function json(status: number, body: unknown, headers: Record<string, string>, route: string): RestAnswer {
  headers["content-type"] = "application/json";
  return { status, headers, body: JSON.stringify(body), route };
}

export type RestBridgeOptions = {
  /** Where the routes live, e.g. "/api/v1"; a route's `openapi.path` is relative to it. */
  basePath: string;
  /** Its procedures with `openapi` meta are the routes. */
  router: AnyRouter;
  /** GET documents served as they are, by path below the base (e.g. "/openapi.json"). */
  documents?: Record<string, () => unknown>;
  /** POSTs take an `Idempotency-Key` header (server/idempotency/): /api/v1, not the agent tools (their `tool_call_id`). */
  idempotencyKeys?: boolean;
};

export type RestBridge = {
  /** Answers one request. Never throws: every failure is an error envelope. */
  answer(req: RestRequest): Promise<RestAnswer>;
  /** The same as a Fetch handler (the app-router route files mount it). */
  handle(req: Request): Promise<Response>;
};

/** A REST surface over `router` under `basePath`, with the whole /api/v1 contract. */
export function createRestBridge(options: RestBridgeOptions): RestBridge {
  const { basePath, router, documents = {}, idempotencyKeys = false } = options;
  let table: RouteTable | undefined;
  const match = (method: string, path: string) => matchIn((table ??= buildRouteTable(router, basePath)), method, path);
  const templates = { unmatched: `${basePath}/{unmatched}`, documents: Object.fromEntries(Object.keys(documents).map((p) => [p, basePath + p])) };
  const answer = (req: RestRequest) => answerWith(basePath, templates, match, documents, idempotencyKeys, req);
  return {
    answer,
    async handle(req) {
      const startedAt = performance.now();
      // Leaving its iteration early (a body over the limit) cancels the rest of the stream.
      const answered = await answer({ method: req.method, target: req.url, headers: req.headers, body: req.body });
      // Timed by its route template, as the node:http form is (node-rest.ts); only Next's route files mount this form.
      observeHttpRequest(answered.route, req.method, answered.status, startedAt);
      return new Response(answered.body, { status: answered.status, headers: answered.headers });
    },
  };
}

function answerWith(
  basePath: string,
  templates: { unmatched: string; documents: Record<string, string> },
  match: (method: string, path: string) => Match,
  documents: Record<string, () => unknown>,
  idempotencyKeys: boolean,
  req: RestRequest,
): Promise<RestAnswer> {
  const requestId = requestIdOf(req.headers);
  // Every line logged while it runs carries its request id (server/lib/log.ts); with tracing on, the
  // request is a span named by the route template it matched.
  const run = () => withRequestLogger(requestId, (logger) => answerInScope(basePath, templates, match, documents, idempotencyKeys, req, requestId, logger));
  return traceRequest(req, templates.unmatched, requestId, run, identity);
}

/** Slash-separated segments of letters, digits, `_` and `-`: the URL parser would give it back unchanged, with no query. */
const PLAIN_PATH = /^(?:\/[\w-]+)+$/;

async function answerInScope(
  basePath: string,
  templates: { unmatched: string; documents: Record<string, string> },
  match: (method: string, path: string) => Match,
  documents: Record<string, () => unknown>,
  idempotencyKeys: boolean,
  req: RestRequest,
  requestId: string,
  logger: RequestLog,
): Promise<RestAnswer> {
  const headers: Record<string, string> = { "x-request-id": requestId };
  // A plain path (what every tool call and most requests send) is its own pathname: no URL is parsed.
  const url = PLAIN_PATH.test(req.target) ? null : new URL(req.target, "http://localhost");
  const pathname = url ? url.pathname : req.target;
  const method = req.method.toUpperCase();
  const path = normalizePath(pathname.startsWith(basePath) ? pathname.slice(basePath.length) : pathname);
  let template = templates.unmatched;

  try {
    const document = method === "GET" && Object.hasOwn(documents, path) ? documents[path] : undefined;
    if (document) return json(200, document(), headers, templates.documents[path]!);
    const found = match(method, path);
    if (!found) throw new AppError("not_found", `no endpoint ${method} ${basePath}${path === "/" ? "" : path}`);
    const { route, params } = found;
    template = route.template;
    // The input (the body above all) is read when the procedure's input parser asks for it, after
    // tenantProcedure has authenticated, limited and authorized: a client without a valid key gets
    // its 401 without the server waiting for its body.
    let input: Promise<Record<string, unknown>> | undefined;
    // Bounded as read (queryInput, bodyInput); the path's parameters are segments of the path as
    // received (ASCII; a parsed URL's pathname keeps `%00` encoded): `inputBounded` below.
    const readInput = async () => {
      const read = method === "GET" || method === "DELETE" ? queryInput(url?.searchParams ?? null, route) : await bodyInput(req, route);
      return Object.assign(read, params);
    };

    const resHeaders = { set: (name: string, value: string) => void (headers[name.toLowerCase()] = value) };
    let clientIp: string | null | undefined;
    const clientIpOf = () =>
      clientIp === undefined ? (clientIp = resolveClientIp({ remoteAddress: req.remoteAddress, forwardedFor: req.headers.get("x-forwarded-for") })) : clientIp;
    const idempotencyKey = idempotencyKeys && method === "POST" ? req.headers.get("idempotency-key") : null;
    const ctx: RequestContext = {
      transport: "rest",
      headers: req.headers,
      clientIp: clientIpOf,
      requestId,
      logger,
      resHeaders,
      response: {},
      idempotencyKey,
      inputBounded: true,
    };
    const data = await callProcedure(route.procedure, {
      ctx,
      type: procedureType(route.procedure),
      path: route.procedurePath,
      input: undefined,
      getRawInput: () => (input ??= readInput()),
      meta: procedureMeta(route.procedure),
      signal: undefined,
      batchIndex: 0,
    });
    // A repeated Idempotency-Key: the first answer's stored text, byte for byte.
    const replayed = ctx.response.replayed;
    if (replayed) return { status: replayed.status, headers: { ...headers, "content-type": "application/json" }, body: replayed.body, route: template };
    return json(ctx.response.status ?? route.successStatus, data, headers, template);
  } catch (err) {
    let error = toAppError(err);
    // A malformed id in the path addresses nothing visible: the same 404 as a missing row.
    if (error.errorCode === "bad_request" && error.field && match(method, path)?.route.pathParams.includes(error.field)) error = notFound();
    // A 503 (database unreachable) is logged once per outage by the breaker (server/db/availability.ts), not per request.
    if (error.errorCode === "internal_error" && error.status !== 503) {
      logger.error({ method, path, error: error.cause ?? err }, "unhandled error");
    }
    for (const [name, value] of Object.entries(error.headers ?? {})) headers[name.toLowerCase()] = value;
    return json(error.status, errorBody(error), headers, template);
  }
}

const v1 = createRestBridge({ basePath: API_BASE_PATH, router: appRouter, documents: { "/openapi.json": getOpenApiDocument }, idempotencyKeys: true });

/** Answers one /api/v1 request. Never throws: every failure is an error envelope. */
export const answerRestRequest = v1.answer;
/** The /api/v1 contract as a Fetch handler (the app-router route files mount it). */
export const handleRestRequest = v1.handle;
