// Who is calling, and what they may do.
import { AppError, MESSAGES } from "../lib/errors";

export const SCOPES = [
  "read",
  "leads:write",
  "appointments:write",
  "offerings:write",
  "conversations:write",
  "crm:write",
  "webhooks:write",
  "assistant:read",
  "privacy:write",
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Scopes only a tenant's owner may use in the dashboard or put on a key they issue (the operator's
 * CLI may too): erasing a customer (`privacy:write`) is irreversible.
 */
const OWNER_ONLY_SCOPES: ReadonlySet<Scope> = new Set<Scope>(["privacy:write"]);

export type Role = "owner" | "admin" | "member";
const MANAGER_ROLES: readonly Role[] = ["owner", "admin"];

export type Principal =
  | { kind: "api_key"; tenantId: string; keyId: string; scopes: string[] }
  | { kind: "user"; tenantId: string; userId: string; role: Role; email?: string };

/** A scope another one grants too: `read` also allows the assistant's read tools (`assistant:read`, which allows nothing else). */
const ALSO_GRANTED_BY: Partial<Record<Scope, Scope>> = { "assistant:read": "read" };

/**
 * The scopes any one of which lets a key act with `scope`: itself, then the one that also grants it,
 * then the procedure's own `also` (the webhook endpoints' reads take `read` or `webhooks:write`, so
 * a deploy script's key with only `webhooks:write` can find its endpoint).
 */
export function scopesAllowing(scope: Scope, also: readonly Scope[] = []): Scope[] {
  const alternative = ALSO_GRANTED_BY[scope];
  return [...new Set([scope, ...(alternative ? [alternative] : []), ...also])];
}

/** Why `principal` may not act with `scope` (or one of `also`) (a 403), or null when it may. */
export function forbiddenFor(principal: Principal, scope: Scope, also: readonly Scope[] = []): AppError | null {
  if (principal.kind === "api_key") {
    // The scope itself, the common case, needs no list of what else would grant it.
    if (principal.scopes.includes(scope)) return null;
    const allowing = scopesAllowing(scope, also);
    if (allowing.some((s) => principal.scopes.includes(s))) return null;
    return new AppError(
      "forbidden",
      MESSAGES.missingScope(scope) +
        allowing
          .slice(1)
          .map((s) => ` (or '${s}')`)
          .join(""),
    );
  }
  if (scope === "read" || scope === "assistant:read") return null;
  if (OWNER_ONLY_SCOPES.has(scope)) return forbiddenUnlessOwner(principal.role, scope);
  return forbiddenUnlessManager(principal.role, "make changes");
}

/** What only an owner may do (use or grant an owner-only scope) is a 403 for any other role. */
function forbiddenUnlessOwner(role: Role, scope: Scope): AppError | null {
  return role === "owner" ? null : new AppError("forbidden", `role '${role}' cannot use or grant scope '${scope}'; an owner can`);
}

/** Why a dashboard user of `role` may not issue a key with `scopes` (a 403), or null when they may. */
export function forbiddenToGrant(role: Role, scopes: readonly Scope[]): AppError | null {
  const ownerOnly = scopes.find((s) => OWNER_ONLY_SCOPES.has(s));
  return ownerOnly ? forbiddenUnlessOwner(role, ownerOnly) : null;
}

/** The one role check: what only owners and admins may do is a 403 for any other role. */
export function forbiddenUnlessManager(role: Role, what: "make changes" | "see this"): AppError | null {
  return MANAGER_ROLES.includes(role) ? null : new AppError("forbidden", `role '${role}' cannot ${what}; an owner or admin can`);
}

/** The audit-log actor of a principal. */
export function actorOf(principal: Principal) {
  return principal.kind === "api_key"
    ? { actorType: "api_key", actorId: principal.keyId, actorLabel: null }
    : { actorType: "user", actorId: principal.userId, actorLabel: principal.email ?? null };
}
