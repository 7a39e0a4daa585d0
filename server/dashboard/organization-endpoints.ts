// better-auth's organization plugin serves endpoints of its own under /api/auth/organization/*
// (delete or rename the organization, change member roles, remove members, invite...), with its own
// rules and no audit. Tenants, memberships and roles change only through the platform's audited
// procedures (the operator CLI, the dashboard's tRPC), so of those endpoints only the ones that read,
// choose the session's active tenant, or let an invitee answer an invitation stay open. Every other one,
// including any a later version or option adds (teams, roles), answers 404 in the error envelope
// before it runs.
import { APIError, createAuthMiddleware } from "better-auth/api";
import { AppError, errorBody } from "../lib/errors";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { recordAudit } from "../audit/record-audit";

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
  // the session's active tenant, among the user's own memberships
  "/organization/set-active",
  // an invitee answering an invitation the platform issued (and audited)
  "/organization/get-invitation",
  "/organization/list-user-invitations",
  "/organization/accept-invitation",
  "/organization/reject-invitation",
]);

export const REFUSED_MESSAGE = "not found: tenants, members and roles are changed only through the dashboard's own procedures";

/** True for an organization endpoint that would change a tenant, its members or roles. */
export const isPlatformOwned = (path: string | undefined): boolean => !!path && path.startsWith("/organization/") && !OPEN_ORGANIZATION_PATHS.has(path);

/**
 * better-auth `hooks.before`: runs for the endpoint the router matched (`ctx.path` is its declared
 * path, whatever spelling the request used) and before its own validation and session checks. The
 * thrown error's body is what the client receives: the platform's error envelope.
 */
export const refuseOrganizationChanges = createAuthMiddleware(async (ctx) => {
  if (isPlatformOwned(ctx.path)) throw new APIError("NOT_FOUND", errorBody(new AppError("not_found", REFUSED_MESSAGE)));
});

type AcceptedInvitation = {
  invitation: { id: string; email: string };
  member: { id: string; role: string };
  user: { id: string; email: string };
  organization: { id: string };
};

/** The organization plugin's `afterAcceptInvitation`: the new membership joins the audit log beside its invitation. */
export async function auditAcceptedInvitation({ invitation, member, user, organization }: AcceptedInvitation): Promise<void> {
  await recordAudit(scopeToTenant(await getDb(), organization.id), {
    actorType: "user",
    actorId: user.id,
    actorLabel: user.email,
    action: "member.joined",
    targetType: "member",
    targetId: member.id,
    details: { email: user.email, role: member.role, invitation_id: invitation.id },
  });
}
