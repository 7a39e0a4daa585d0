// The tRPC foundation: request context, procedure builders, and the one middleware that
// authenticates, rate-limits and authorizes every tenant procedure (REST and dashboard alike).
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { AppError, tenantSuspended, toAppError } from "../lib/errors";
import { dbIfOpen, getDb, getReadSql, readSqlIfOpen } from "../db/client";
import { scopeSqlToTenant, scopeToTenant, type TenantDb } from "../db/tenant-scope";
import { assertBoundedInput } from "../lib/bounded-input";
import { authenticateApiKey, cachedApiKey, forgetCachedApiKey, StaleKeyError, type AuthenticatedKey } from "../auth/authenticate";
import type { Principal, Scope } from "../auth/principal";
import { forbiddenFor } from "../auth/principal";
import { limitAgentToolRequest, limitApiRequest, limitDashboardRequest, limitInboundRequest, type LimitDecision } from "../ratelimit";
import { clientIpFromHeaders } from "../lib/client-ip";
import { refusalOfFailedAuth } from "../ratelimit/failed-auth";
import { runIdempotently, type ReplayedAnswer, type SecretAnswer } from "../idempotency/idempotency";
import { noteRequestTenant, type RequestLog } from "../lib/log";
import { noteSpanTenant } from "../observability/tracing";

export type DashboardIdentity = {
  userId: string;
  tenantId: string;
  role: "owner" | "admin" | "member";
  email?: string;
  /** The tenant is suspended (server/tenants/lifecycle.ts): every tenant procedure answers 403. */
  suspended?: boolean;
};

/** What a procedure reads of the request's headers: Fetch's `Headers`, or the REST bridge's reader over them. */
export type HeaderReader = { get(name: string): string | null };
/** Where a procedure adds response headers (Fetch's `Headers` on the tRPC endpoint, a plain map on the REST bridge). */
type HeaderWriter = { set(name: string, value: string): void };

export type RequestContext = {
  requestId: string;
  /** The request's logger: every line carries `request_id` (server/lib/log.ts; `log` reads the same one in its scope). */
  logger: RequestLog;
  /**
   * The client's address (server/lib/client-ip.ts), resolved when first asked (only a refused key and
   * a public procedure ask): the REST bridge gives it; the dashboard's endpoint may (the lean front
   * has already put it in X-Forwarded-For). Absent for in-process callers.
   */
  clientIp?: () => string | null;
  /** Headers a procedure adds to its response (rate-limit headers, for instance). */
  resHeaders: HeaderWriter;
  /**
   * The response a procedure may shape beyond its data: a success status overriding
   * `meta.successStatus` (e.g. 200 for a create that found the existing row). An object, because
   * tRPC copies the context between middlewares and the bridge must see what the handler set.
   */
  response: { status?: number; replayed?: ReplayedAnswer };
  /**
   * The transport has bounded the raw input already (`assertBoundedInput`: the REST bridge, on every
   * body and query it reads), so tenantProcedure does not walk it a second time.
   */
  inputBounded?: true;
} & (
  | {
      /** The /api/v1 bridge, with API keys. */
      transport: "rest";
      headers: HeaderReader;
      /** A POST's `Idempotency-Key` header as sent, on the bridges that take one (server/idempotency/). */
      idempotencyKey?: string | null;
    }
  /** The dashboard's tRPC endpoint, with a signed-in user. */
  | {
      transport: "trpc";
      headers: Headers;
      /** Resolves the signed-in dashboard user and their active tenant. */
      dashboardIdentity: () => Promise<DashboardIdentity | null>;
    }
);

/**
 * `successStatus` documents and answers a create's 201 (a procedure may still set
 * `ctx.response.status`); `alsoAnswers` documents such other success statuses with the same body
 * (e.g. 200 for a create that found the existing row). `scope` is set by tenantProcedure itself (the
 * scope it checks), so the OpenAPI documents state what is enforced, not a copy of it.
 */
export type ProcedureMeta = OpenApiMeta<{
  successStatus?: 200 | 201;
  alsoAnswers?: { status: 200; description: string };
  scope?: Scope;
  /** Other scopes that let a key call it too (set by tenantProcedure's `opts.also`). */
  alsoScopes?: readonly Scope[];
  /** Its answer carries a secret: an `Idempotency-Key` stores it sealed and replays it only while in force. */
  replayedSecret?: SecretAnswer;
}>;

const t = initTRPC
  .meta<ProcedureMeta>()
  .context<RequestContext>()
  .create({
    errorFormatter({ shape, error }) {
      const app = toAppError(error);
      return {
        ...shape,
        message: app.message,
        data: { ...shape.data, stack: undefined, appCode: app.errorCode, field: app.field ?? null, httpStatus: app.status },
      };
    },
  });

export const router = t.router;
/**
 * A procedure anyone may call (the invitation page's lookup and sign-up): no principal, so it is
 * limited per client address, with the receivers' per-IP layer (`RATE_LIMIT_PER_IP`), then its
 * input is bounded as every tenant procedure's is (429, then 400).
 */
export const publicProcedure = t.procedure.use(async ({ ctx, next, getRawInput }) => {
  const ip = ctx.clientIp?.() ?? clientIpFromHeaders(ctx.headers);
  if (ip) {
    const decision = await limitInboundRequest({ ip });
    for (const [name, value] of Object.entries(decision.headers)) ctx.resHeaders.set(name, value);
    if (!decision.allowed) throw new AppError("rate_limited", decision.message, { headers: decision.headers });
  }
  assertBoundedInput(await getRawInput());
  return next();
});
export const createCallerFactory = t.createCallerFactory;

/**
 * Who is calling: an API key on REST, the signed-in user on the dashboard. A refused key is
 * answered 401, or 429 once its client address has failed too often (failed-auth.ts).
 */
export async function authenticate(ctx: RequestContext): Promise<Principal> {
  if (ctx.transport === "rest") {
    let key: AuthenticatedKey;
    try {
      key = await authenticateApiKey(ctx.headers.get("authorization"));
    } catch (err) {
      throw err instanceof AppError && err.errorCode === "unauthorized" ? await refusalOfFailedAuth(ctx.clientIp?.(), err) : err;
    }
    noteTenant(key.tenantId);
    return { kind: "api_key", tenantId: key.tenantId, keyId: key.id, scopes: key.scopes };
  }
  const identity = await ctx.dashboardIdentity();
  if (!identity) {
    ctx.logger.info({ reason: "no session" }, "dashboard auth refused");
    throw new AppError("unauthorized", "sign in to continue");
  }
  if (identity.suspended) {
    ctx.logger.info({ reason: "tenant suspended" }, "dashboard auth refused");
    throw tenantSuspended();
  }
  noteTenant(identity.tenantId);
  return { kind: "user", tenantId: identity.tenantId, userId: identity.userId, role: identity.role, email: identity.email };
}

/** The request is now known to act for `tenantId`: its later log lines and its span say so. */
function noteTenant(tenantId: string): void {
  noteRequestTenant(tenantId);
  noteSpanTenant(tenantId);
}

/**
 * The caller's rate-limit decision: per key and tenant on REST, per user and tenant on the
 * dashboard; an agent tool call adds its per-(tenant, tool) layer to the same one check, so each
 * bucket is counted once per call.
 */
function limit(principal: Principal, tool: string | undefined): Promise<LimitDecision> {
  if (principal.kind !== "api_key") return limitDashboardRequest({ userId: principal.userId, tenantId: principal.tenantId });
  return tool
    ? limitAgentToolRequest({ keyId: principal.keyId, tenantId: principal.tenantId, tool })
    : limitApiRequest({ keyId: principal.keyId, tenantId: principal.tenantId });
}

/**
 * A procedure over one tenant's data. `scope` is the API-key scope it needs; for dashboard users,
 * `read` is open to every role and any write scope needs owner or admin. One straight path:
 * authenticate (401), limit (429), authorize (403), then read and bound the input (400; on REST
 * the body is read only here, so an unauthenticated client cannot hold a socket with a slow
 * body), then run the handler. Rate-limit headers are on every answer past the limiter.
 * `opts.tool` names the agent tool a procedure is (its limit layer joins the check); `opts.also`
 * names other scopes that let a key call it too.
 */
export function tenantProcedure(scope: Scope, opts: { tool?: string; also?: readonly Scope[]; confirmsKey?: true } = {}) {
  return t.procedure.meta({ scope, alsoScopes: opts.also }).use(async ({ ctx, next, getRawInput, path, meta }) => {
    // `confirmsKey`: the handler's one write confirms the key (`ctx.keyToConfirm`, see authenticate.ts),
    // so a key this process knows is not looked up again. Not with an Idempotency-Key (its transaction
    // stores the answer too) nor for a key it does not know.
    const remembered = opts.confirmsKey && ctx.transport === "rest" && ctx.idempotencyKey == null ? cachedApiKey(ctx.headers.get("authorization")) : null;
    if (remembered) noteTenant(remembered.tenantId);
    const principal: Principal = remembered
      ? { kind: "api_key", tenantId: remembered.tenantId, keyId: remembered.id, scopes: remembered.scopes }
      : await authenticate(ctx);
    const decision = await limit(principal, opts.tool);
    for (const [name, value] of Object.entries(decision.headers)) ctx.resHeaders.set(name, value);
    if (!decision.allowed) throw new AppError("rate_limited", decision.message, { headers: decision.headers });
    const forbidden = forbiddenFor(principal, scope, opts.also);
    if (forbidden) throw forbidden;
    // The same bounds on every surface (depth, NUL, lone surrogates, non-finite numbers): a 400 naming the field.
    const input = await getRawInput();
    if (!ctx.inputBounded) assertBoundedInput(input);
    const db = scopeToTenant(dbIfOpen() ?? (await getDb()), principal.tenantId);
    // Procedures read through it (the hot lists, search): short indexed reads, on the read connection.
    const sql = scopeSqlToTenant(readSqlIfOpen() ?? (await getReadSql()), principal.tenantId);
    // tRPC (and the REST bridge's caller) merge these into the context: no copy of it here.
    const run = (db: TenantDb, keyToConfirm: string | null = null) => next({ ctx: { principal, tenantId: principal.tenantId, db, sql, keyToConfirm } });
    if (remembered) {
      const result = await run(db, remembered.id);
      if (result.ok || !(result.error.cause instanceof StaleKeyError)) return result;
      // Revoked, or its tenant suspended, since this process looked it up: nothing was stored. The
      // lookup answers (401 or 403); a key still valid after all runs again, confirmed.
      forgetCachedApiKey(remembered.id);
      await authenticate(ctx);
      return run(db);
    }
    if (ctx.transport !== "rest" || ctx.idempotencyKey == null || principal.kind !== "api_key") return run(db);
    // The change and its stored answer in one transaction; a repeat of the key gets that answer.
    return runIdempotently({
      key: ctx.idempotencyKey,
      tenantId: principal.tenantId,
      apiKeyId: principal.keyId,
      db,
      endpoint: path,
      input,
      response: ctx.response,
      successStatus: meta?.successStatus ?? 200,
      setHeader: (name, value) => ctx.resHeaders.set(name, value),
      run,
      secret: meta?.replayedSecret,
    });
  });
}
