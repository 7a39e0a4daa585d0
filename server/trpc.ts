// The tRPC foundation: request context, procedure builders, and the one middleware that
// authenticates, rate-limits and authorizes every tenant procedure (REST and dashboard alike).
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { AppError, MESSAGES, toAppError } from "./errors";
import { getDb, getSql } from "./db/client";
import { scopeSqlToTenant, scopeToTenant } from "./db/tenant-scope";
import { authenticateApiKey, likelyOwnerOf, type AuthenticatedKey } from "./auth/authenticate";
import type { Principal, Scope } from "./auth/principal";
import { forbiddenFor } from "./auth/principal";
import { limitApiRequest, limitDashboardRequest, refundApiRequest, type LimitDecision } from "./ratelimit";
import { refusedRecently, rememberRefusal } from "./ratelimit/recent-refusals";

export type DashboardIdentity = { userId: string; tenantId: string; role: "owner" | "admin" | "member"; email?: string };

/** What a procedure reads of the request's headers: Fetch's `Headers`, or the REST bridge's reader over them. */
export type HeaderReader = { get(name: string): string | null };
/** Where a procedure adds response headers (Fetch's `Headers` on the tRPC endpoint, a plain map on the REST bridge). */
export type HeaderWriter = { set(name: string, value: string): void };

export type RequestContext = {
  requestId: string;
  /** Headers a procedure adds to its response (rate-limit headers, for instance). */
  resHeaders: HeaderWriter;
  /**
   * The response a procedure may shape beyond its data: a success status overriding
   * `meta.successStatus` (e.g. 200 for a create that found the existing row). An object, because
   * tRPC copies the context between middlewares and the bridge must see what the handler set.
   */
  response: { status?: number };
} & (
  /** The /api/v1 bridge, with API keys. */
  | { transport: "rest"; headers: HeaderReader }
  /** The dashboard's tRPC endpoint, with a signed-in user. */
  | {
      transport: "trpc";
      headers: Headers;
      /** Resolves the signed-in dashboard user and their active tenant. */
      dashboardIdentity: () => Promise<DashboardIdentity | null>;
    }
);

/** `successStatus` documents and answers a create's 201 (a procedure may still set `ctx.response.status`). */
export type ProcedureMeta = OpenApiMeta<{ successStatus?: 200 | 201 }>;

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
export const publicProcedure = t.procedure;
export const createCallerFactory = t.createCallerFactory;

/**
 * Who is calling, and their rate-limit decision (still pending: the caller decides when to wait for
 * it). For an API key seen before in this process, the limiter is asked while the key is still
 * being looked up (its key and tenant ids are known from its prefix), so the two round trips
 * overlap; if the key then fails authentication, the tokens that request took are given back and
 * it answers 401 as usual. The decision never rejects: the limiter fails open.
 */
async function identify(ctx: RequestContext): Promise<{ principal: Principal; decision: Promise<LimitDecision> }> {
  if (ctx.transport === "rest") {
    const authorization = ctx.headers.get("authorization");
    const owner = likelyOwnerOf(authorization);
    const lookup = authenticateApiKey(authorization, ctx.requestId); // its query leaves first…
    // …and the limiter's work starts right behind it, while that query is out.
    const early = owner ? new Promise<LimitDecision>((resolve) => process.nextTick(() => resolve(limitApiRequest(owner)))) : null;
    const giveBackEarly = () => void early?.then((d) => (d.allowed && owner ? refundApiRequest(owner) : undefined));
    let key: AuthenticatedKey;
    try {
      key = await lookup;
    } catch (err) {
      giveBackEarly();
      throw err;
    }
    const counted = early && owner?.keyId === key.id && owner.tenantId === key.tenantId;
    if (!counted) giveBackEarly();
    return {
      principal: { kind: "api_key", tenantId: key.tenantId, keyId: key.id, scopes: key.scopes },
      decision: counted ? early : limitApiRequest({ keyId: key.id, tenantId: key.tenantId }),
    };
  }
  const identity = await ctx.dashboardIdentity();
  if (!identity) throw new AppError("unauthorized", "sign in to continue");
  return {
    principal: { kind: "user", tenantId: identity.tenantId, userId: identity.userId, role: identity.role, email: identity.email },
    decision: limitDashboardRequest({ userId: identity.userId, tenantId: identity.tenantId }),
  };
}

/**
 * A procedure over one tenant's data. `scope` is the API-key scope it needs; for dashboard users,
 * `read` is open to every role and any write scope needs owner or admin. Answers, in this order:
 * 401 (who), 429 (how often), 403 (what).
 *
 * A read the caller may make starts while the limiter is still deciding, so the limiter's round
 * trip hides behind the read's own queries instead of adding to them. Its answer is used only if
 * the request is admitted; a refused one is answered 429 exactly as before, with nothing of the
 * read in it. Writes always wait for the decision. So that a caller hammering past its limit does
 * not get a wasted read per request, a caller refused in this process waits for the decision until
 * the refusing window has reset.
 */
export function tenantProcedure(scope: Scope) {
  return t.procedure.use(async ({ ctx, next, type }) => {
    const { principal, decision: deciding } = await identify(ctx);
    const forbidden = forbiddenFor(principal, scope);
    const db = scopeToTenant(await getDb(), principal.tenantId);
    const sql = scopeSqlToTenant(await getSql(), principal.tenantId);
    const run = () => next({ ctx: { ...ctx, principal, tenantId: principal.tenantId, db, sql } });
    const early = type === "query" && !forbidden && !refusedRecently(callerOf(principal)) ? run() : null;
    const decision = await deciding;
    for (const [name, value] of Object.entries(decision.headers)) ctx.resHeaders.set(name, value);
    if (!decision.allowed) {
      rememberRefusal(callerOf(principal), Number(decision.headers["X-RateLimit-Reset"]));
      throw new AppError("rate_limited", decision.message, { headers: decision.headers });
    }
    if (forbidden) throw forbidden;
    return early ?? run();
  });
}

/** Whose buckets a principal counts against, as the read-ahead's memory of refusals names them. */
const callerOf = (p: Principal) => (p.kind === "api_key" ? `key:${p.keyId}` : `user:${p.userId}`);

export { MESSAGES };
