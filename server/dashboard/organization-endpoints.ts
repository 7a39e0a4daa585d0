// better-auth's organization plugin serves endpoints of its own under /api/auth/organization/*
// (delete or rename the organization, change member roles, remove members, invite...), with its own
// rules and no audit. Tenants, memberships and roles change only through the platform's audited
// procedures (the operator CLI, the dashboard's tRPC), so of those endpoints only the ones that read
// or choose the session's active tenant stay open. Every other one, including any a later version or
// option adds (teams, roles), answers 404 in the error envelope before it runs. That includes
// better-auth's get-, accept- and reject-invitation: they open an invitation by its id, which every
// member of the tenant can read; the platform's own procedures (dashboard.invitation.*) take the
// link's secret instead. The open ones answer only for the user's own tenants, and not for a
// suspended one (403 "tenant suspended", as the rest of the dashboard).
import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { AppError, errorBody, tenantSuspended } from "../lib/errors";
import { getDb } from "../db/client";

const OPEN_ORGANIZATION_PATHS = new Set([
  // reads (better-auth checks membership)
  "/organization/get-full-organization",
  "/organization/get-organization",
  "/organization/list",
  "/organization/list-members",
  "/organization/get-active-member",
  "/organization/get-active-member-role",
  "/organization/list-invitations",
  "/organization/has-permission",
  "/organization/check-slug",
  // the invitations sent to the session's own address (ids only: an id does not open an invitation)
  "/organization/list-user-invitations",
  // the session's active tenant, among the user's own memberships (see refuseForeignOrSuspendedTenant)
  "/organization/set-active",
]);

export const REFUSED_MESSAGE = "not found: tenants, members and roles are changed only through the dashboard's own procedures";

/** True for an organization endpoint that would change a tenant, its members or roles. */
const isPlatformOwned = (path: string | undefined): boolean => !!path && path.startsWith("/organization/") && !OPEN_ORGANIZATION_PATHS.has(path);

export const NOT_A_MEMBER_MESSAGE = "you are not a member of this tenant";
const notAMember = () => new APIError("FORBIDDEN", errorBody(new AppError("forbidden", NOT_A_MEMBER_MESSAGE)));
/** The dashboard's refusal of a suspended tenant (tRPC's `authenticate`, the export): 403 with the same envelope. */
const suspended = () => new APIError("FORBIDDEN", errorBody(tenantSuspended()));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The open endpoints that read no one tenant: the user's own tenants and invitations, a slug's availability. */
const NOT_ONE_TENANT = new Set(["/organization/list", "/organization/list-user-invitations", "/organization/check-slug"]);

type Named = { ids: string[]; slugs: string[] };

/** The tenants a request names, by id or slug, in its query or body (better-auth reads either, by endpoint). */
function namedTenants(ctx: { body?: unknown; query?: unknown }): Named {
  const named: Named = { ids: [], slugs: [] };
  for (const source of [ctx.query, ctx.body]) {
    const { organizationId, organizationSlug } = (source ?? {}) as { organizationId?: unknown; organizationSlug?: unknown };
    if (typeof organizationId === "string" && organizationId !== "") named.ids.push(organizationId);
    if (typeof organizationSlug === "string" && organizationSlug !== "") named.slugs.push(organizationSlug);
  }
  return named;
}

/**
 * An endpoint that reads or chooses one tenant (the one the request names, else the session's
 * active one) answers only for the user's own tenant, and not while it is suspended:
 * - another tenant (or an unknown one: no answer tells which tenants exist) is refused 403 before
 *   better-auth runs, since better-auth would first clear the session's active tenant (get-full-
 *   and get-organization, set-active), and the dashboard would answer 401 until the user chose one again;
 * - a suspended tenant is refused as the rest of the dashboard refuses it (403 "tenant suspended"):
 *   its members, their addresses and its invitations are not read through better-auth either.
 * set-active with `organizationId: null` (choose none) is the user's own choice and passes.
 */
async function refuseForeignOrSuspendedTenant(
  ctx: { path?: string; body?: unknown; query?: unknown },
  session: () => Promise<{ user: { id: string }; session: { activeOrganizationId?: string | null } } | null>,
) {
  const named = namedTenants(ctx);
  const choosesNone = ctx.path === "/organization/set-active" && (ctx.body as { organizationId?: unknown } | undefined)?.organizationId === null;
  if (choosesNone && named.slugs.length === 0) return;
  const current = await session();
  if (!current) return; // better-auth answers 401
  if (named.ids.length === 0 && named.slugs.length === 0) {
    const active = current.session.activeOrganizationId;
    if (!active) return; // better-auth answers that no tenant is chosen
    named.ids.push(active);
  }
  // Tenant ids are uuids (a uuid column): anything else names no tenant, and is not sent to the database.
  if (!named.ids.every((id) => UUID.test(id))) throw notAMember();
  const db = await getDb();
  const memberships = await db.member.findMany({
    where: { userId: current.user.id, OR: [{ organizationId: { in: named.ids } }, { tenant: { slug: { in: named.slugs } } }] },
    select: { organizationId: true, tenant: { select: { slug: true, suspendedAt: true } } },
  });
  const isMine = (id: string) => memberships.some((m) => m.organizationId === id);
  const isMineBySlug = (slug: string) => memberships.some((m) => m.tenant.slug === slug);
  if (!named.ids.every(isMine) || !named.slugs.every(isMineBySlug)) throw notAMember();
  if (memberships.some((m) => m.tenant.suspendedAt)) throw suspended();
}

/**
 * better-auth `hooks.before`: runs for the endpoint the router matched (`ctx.path` is its declared
 * path, whatever spelling the request used) and before its own validation and session checks. The
 * thrown error's body is what the client receives: the platform's error envelope.
 */
export const refuseOrganizationChanges = createAuthMiddleware(async (ctx) => {
  if (isPlatformOwned(ctx.path)) throw new APIError("NOT_FOUND", errorBody(new AppError("not_found", REFUSED_MESSAGE)));
  if (ctx.path?.startsWith("/organization/") && !NOT_ONE_TENANT.has(ctx.path)) await refuseForeignOrSuspendedTenant(ctx, () => getSessionFromCtx(ctx));
});
