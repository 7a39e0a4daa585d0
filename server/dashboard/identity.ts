// The signed-in dashboard user of a request: better-auth session -> active tenant -> role.
import { getDb } from "../db/client";
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
  const db = await getDb();
  const member = await db.member.findUnique({
    where: { organizationId_userId: { organizationId: tenantId, userId: current.user.id } },
    select: { role: true },
  });
  // A role string better-auth may store as a comma list; the strongest known role wins.
  const roles = member?.role.split(",").map((r) => r.trim()) ?? [];
  const role = ROLES.find((r) => roles.includes(r));
  if (!role) return null;
  return { userId: current.user.id, tenantId, role, email: current.user.email };
}
