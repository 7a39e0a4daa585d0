// better-auth's organization plugin serves endpoints of its own under /api/auth/organization/*
// (delete or rename the organization, change member roles, remove members, invite...), with its own
// rules and no audit. Tenants, memberships and roles change only through the platform's audited
// procedures (the operator CLI, the dashboard's tRPC), so of those endpoints only the ones that read
// or choose the session's active tenant stay open. Every other one, including any a later version or
// option adds (teams, roles), answers 404 in the error envelope before it runs. That includes
// better-auth's get-, accept- and reject-invitation: they open an invitation by its id, which every
// member of the tenant can read; the platform's own procedures (dashboard.invitation.*) take the
// link's secret instead.
import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { AppError, errorBody } from "../lib/errors";
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
  // the session's active tenant, among the user's own memberships (see refuseForeignActiveTenant)
  "/organization/set-active",
]);

export const REFUSED_MESSAGE = "not found: tenants, members and roles are changed only through the dashboard's own procedures";

/** True for an organization endpoint that would change a tenant, its members or roles. */
export const isPlatformOwned = (path: string | undefined): boolean => !!path && path.startsWith("/organization/") && !OPEN_ORGANIZATION_PATHS.has(path);

export const NOT_A_MEMBER_MESSAGE = "you are not a member of this tenant";
const notAMember = () => new APIError("FORBIDDEN", errorBody(new AppError("forbidden", NOT_A_MEMBER_MESSAGE)));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * set-active with a tenant the user is not a member of: better-auth answers 403 but first clears the
 * session's active tenant, so the dashboard answers 401 until the user chooses one again. Refused here,
 * before better-auth runs, so the session stays exactly as it was. (An unknown tenant is refused the
 * same way: no answer tells which tenants exist.) `organizationId: null` (choose none) is the user's own
 * choice and passes.
 */
async function refuseForeignActiveTenant(ctx: { body?: unknown }, session: () => Promise<{ user: { id: string } } | null>) {
  const body = (ctx.body ?? {}) as { organizationId?: unknown; organizationSlug?: unknown };
  const byId = typeof body.organizationId === "string" && body.organizationId !== "";
  const bySlug = !byId && typeof body.organizationSlug === "string" && body.organizationSlug !== "";
  if (!byId && !bySlug) return;
  const current = await session();
  if (!current) return; // better-auth answers 401
  // Tenant ids are uuids (a uuid column): anything else names no tenant, and is not sent to the database.
  if (byId && !UUID.test(body.organizationId as string)) throw notAMember();
  const db = await getDb();
  const member = await db.member.findFirst({
    where: {
      userId: current.user.id,
      ...(byId ? { organizationId: body.organizationId as string } : { tenant: { slug: body.organizationSlug as string } }),
    },
    select: { id: true },
  });
  if (!member) throw notAMember();
}

/**
 * better-auth `hooks.before`: runs for the endpoint the router matched (`ctx.path` is its declared
 * path, whatever spelling the request used) and before its own validation and session checks. The
 * thrown error's body is what the client receives: the platform's error envelope.
 */
export const refuseOrganizationChanges = createAuthMiddleware(async (ctx) => {
  if (isPlatformOwned(ctx.path)) throw new APIError("NOT_FOUND", errorBody(new AppError("not_found", REFUSED_MESSAGE)));
  if (ctx.path === "/organization/set-active") await refuseForeignActiveTenant(ctx, () => getSessionFromCtx(ctx));
});
