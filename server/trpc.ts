// The tRPC foundation: request context, procedure builders, and the one middleware that
// authenticates, rate-limits and authorizes every tenant procedure (REST and dashboard alike).
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { AppError, MESSAGES, toAppError } from "./errors";
import { getDb } from "./db/client";
import { scopeToTenant } from "./db/tenant-scope";
import { authenticateApiKey } from "./auth/authenticate";
import type { Principal, Scope } from "./auth/principal";
import { assertAllowed } from "./auth/principal";
import { limitApiRequest, limitDashboardRequest } from "./ratelimit";

export type DashboardIdentity = { userId: string; tenantId: string; role: "owner" | "admin" | "member"; email?: string };

export type RequestContext = {
  /** `rest`: the /api/v1 bridge with API keys; `trpc`: the dashboard with a signed-in user. */
  transport: "rest" | "trpc";
  headers: Headers;
  requestId: string;
  /** Headers a procedure adds to its response (rate-limit headers, for instance). */
  resHeaders: Headers;
  /**
   * The response a procedure may shape beyond its data: a success status overriding
   * `meta.successStatus` (e.g. 200 for a create that found the existing row). An object, because
   * tRPC copies the context between middlewares and the bridge must see what the handler set.
   */
  response: { status?: number };
  /** Resolves the signed-in dashboard user and their active tenant (set by the tRPC route). */
  dashboardIdentity?: () => Promise<DashboardIdentity | null>;
};

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

async function resolvePrincipal(ctx: RequestContext): Promise<Principal> {
  if (ctx.transport === "rest") {
    const key = await authenticateApiKey(ctx.headers.get("authorization"), ctx.requestId);
    const decision = await limitApiRequest({ keyId: key.id, tenantId: key.tenantId });
    for (const [name, value] of Object.entries(decision.headers)) ctx.resHeaders.set(name, value);
    if (!decision.allowed) throw new AppError("rate_limited", decision.message, { headers: decision.headers });
    return { kind: "api_key", tenantId: key.tenantId, keyId: key.id, scopes: key.scopes };
  }
  const identity = await ctx.dashboardIdentity?.();
  if (!identity) throw new AppError("unauthorized", "sign in to continue");
  const decision = await limitDashboardRequest({ userId: identity.userId, tenantId: identity.tenantId });
  for (const [name, value] of Object.entries(decision.headers)) ctx.resHeaders.set(name, value);
  if (!decision.allowed) throw new AppError("rate_limited", decision.message, { headers: decision.headers });
  return { kind: "user", tenantId: identity.tenantId, userId: identity.userId, role: identity.role, email: identity.email };
}

/**
 * A procedure over one tenant's data. `scope` is the API-key scope it needs; for dashboard users,
 * `read` is open to every role and any write scope needs owner or admin.
 */
export function tenantProcedure(scope: Scope) {
  return t.procedure.use(async ({ ctx, next }) => {
    const principal = await resolvePrincipal(ctx);
    assertAllowed(principal, scope);
    const db = scopeToTenant(await getDb(), principal.tenantId);
    return next({ ctx: { ...ctx, principal, tenantId: principal.tenantId, db } });
  });
}

export { MESSAGES };
