// Procedure builders for dashboard-only procedures (never exposed on /api/v1: no openapi meta).
import { AppError } from "../lib/errors";
import { forbiddenUnlessManager, type Principal } from "../auth/principal";
import { tenantProcedure } from "./trpc";

type UserPrincipal = Extract<Principal, { kind: "user" }>;

/** Any signed-in member of the active tenant (read access). */
export const memberProcedure = tenantProcedure("read").use(({ ctx, next }) => {
  if (ctx.principal.kind !== "user" || ctx.transport !== "trpc") throw new AppError("forbidden", "dashboard procedures need a signed-in user");
  return next({ ctx: { ...ctx, user: ctx.principal as UserPrincipal, headers: ctx.headers } });
});

function ownersAndAdmins(what: "make changes" | "see this") {
  return memberProcedure.use(({ ctx, next }) => {
    const refusal = forbiddenUnlessManager(ctx.user.role, what);
    if (refusal) throw refusal;
    return next();
  });
}

/** Owners and admins: everything that changes keys, subscriptions, the CRM connection, members. */
export const managerProcedure = ownersAndAdmins("make changes");

/** Reads meant for owners and admins only (the dead-letter alerts). */
export const managerReadProcedure = ownersAndAdmins("see this");
