// Inviting someone to a tenant: the platform's procedure (better-auth's own invite endpoint is closed,
// see organization-endpoints.ts). The invitation row is better-auth's, so its accept-invitation
// endpoint lets the invitee join; it is written here with its audit entry in one transaction, under
// a lock on the tenant row so that concurrent invitations cannot both pass the duplicate checks.
import { randomUUID } from "node:crypto";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { AppError, conflict } from "../errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import type { Role } from "../auth/principal";
import type { InviteMemberInput } from "./dashboard.types";

export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** Pending invitations per tenant (better-auth's own default limit). */
export const MAX_PENDING_INVITATIONS = 100;

type Inviter = { userId: string; role: Role };

async function lockTenant(tx: TenantTx, tenantId: string) {
  await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
}

/** Only an owner makes owners; already a member, already invited, or too many pending: refused, naming the field. */
async function assertInvitable(tx: TenantTx, tenantId: string, inviter: Inviter, email: string, role: Role) {
  if (role === "owner" && inviter.role !== "owner") throw new AppError("forbidden", "only an owner can invite an owner", { field: "role" });
  const member = await tx.member.findFirst({ where: { organizationId: tenantId, user: { email } }, select: { id: true } });
  if (member) throw conflict(`${email} is already a member of this tenant`, "email");
  const pending = await tx.invitation.findMany({
    where: { organizationId: tenantId, status: "pending", expiresAt: { gt: new Date() } },
    select: { email: true },
  });
  if (pending.some((p) => p.email.toLowerCase() === email)) throw conflict(`${email} already has a pending invitation`, "email");
  if (pending.length >= MAX_PENDING_INVITATIONS) {
    throw conflict(`at most ${MAX_PENDING_INVITATIONS} invitations may be pending; wait for some to be accepted or to expire`, "email");
  }
}

export async function inviteMember(db: TenantDb, tenantId: string, inviter: Inviter, actor: AuditActor, input: InviteMemberInput) {
  const email = input.email.trim().toLowerCase();
  return db.$transaction(async (tx) => {
    await lockTenant(tx, tenantId);
    await assertInvitable(tx, tenantId, inviter, email, input.role);
    const invitation = await tx.invitation.create({
      data: {
        id: randomUUID(), organizationId: tenantId, email, role: input.role, status: "pending",
        expiresAt: new Date(Date.now() + INVITATION_TTL_SECONDS * 1000), inviterId: inviter.userId,
      },
    });
    await recordAudit(tx, {
      ...actor, action: "member.invited", targetType: "invitation", targetId: invitation.id, details: { email, role: input.role },
    });
    return { id: invitation.id, email, role: input.role, expires_at: invitation.expiresAt.toISOString() };
  });
}
