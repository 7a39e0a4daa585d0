// The signed-in dashboard user of a request: better-auth session -> active tenant -> role.
import { database } from "../db/database";
import type { Role } from "../auth/principal";
import type { DashboardIdentity } from "../trpc/trpc";
import { getAuth } from "./auth-on-first-use";

const ROLES: readonly Role[] = ["owner", "admin", "member"];

export async function resolveDashboardIdentity(headers: Headers): Promise<DashboardIdentity | null> {
  const auth = await getAuth();
  // No cookie cache: a revoked session or a removed membership takes effect on the next request.
  const current = await auth.api.getSession({ headers, query: { disableCookieCache: true } });
  const tenantId = current?.session.activeOrganizationId;
  if (!current || !tenantId) return null;
  const db = database().prisma;
  const member = await db.member.findUnique({
    where: { organizationId_userId: { organizationId: tenantId, userId: current.user.id } },
    select: { role: true, tenant: { select: { suspendedAt: true } } },
  });
  // A role string better-auth may store as a comma list; the strongest known role wins.
  const roles = member?.role.split(",").map((r) => r.trim()) ?? [];
  const role = ROLES.find((r) => roles.includes(r));
  if (!role) return null;
  return { userId: current.user.id, tenantId, role, email: current.user.email, ...(member?.tenant.suspendedAt ? { suspended: true } : {}) };
}

/**
 * The signed-in user of a request whatever their tenant (none yet, or another one): an invitee
 * accepting an invitation. Null without a valid session.
 */
export async function resolveSignedInUser(headers: Headers): Promise<{ userId: string; email: string; sessionToken: string } | null> {
  const auth = await getAuth();
  const current = await auth.api.getSession({ headers, query: { disableCookieCache: true } });
  if (!current) return null;
  return { userId: current.user.id, email: current.user.email, sessionToken: current.session.token };
}

/** Makes a tenant the session's active one (what better-auth's set-active writes), after the user joined it. */
export async function makeActiveTenant(sessionToken: string, tenantId: string): Promise<void> {
  const db = database().prisma;
  await db.session.update({ where: { token: sessionToken }, data: { activeOrganizationId: tenantId } });
}
