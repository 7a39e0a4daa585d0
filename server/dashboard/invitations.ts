// Inviting someone to a tenant: the platform's procedures (better-auth's own invite endpoint is closed,
// see organization-endpoints.ts). The invitation row is better-auth's, so its accept-invitation
// endpoint lets a signed-in invitee join; someone without an account sets a password here instead
// (`acceptWithNewAccount`), which creates the user and the membership in one transaction. Every change
// is written with its audit entry in one transaction, under a lock on the tenant row so that
// concurrent invitations cannot both pass the duplicate checks.
import { randomUUID } from "node:crypto";
import { getDb } from "../db/client";
import { lockTenant } from "../db/lock-row";
import { scopeToTenant, type TenantDb, type TenantTx } from "../db/tenant-scope";
import { AppError, conflict } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import type { Role } from "../auth/principal";
import type { AcceptWithNewAccountInput, InviteMemberInput } from "./dashboard.types";
import { invitationMessage, sendInvitationMail, type MailOutcome } from "./invitation-mail";
import { hashPassword, insertCredentialUser } from "./users";

export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** Pending invitations per tenant (better-auth's own default limit). */
export const MAX_PENDING_INVITATIONS = 100;

type Inviter = { userId: string; role: Role; email?: string };

/** The page an invitee opens: `<dashboard origin>/accept-invitation?id=<invitation id>`. */
export const invitationLink = (origin: string, id: string) => `${origin}/accept-invitation?id=${encodeURIComponent(id)}`;

const expiry = () => new Date(Date.now() + INVITATION_TTL_SECONDS * 1000);

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

async function mailInvitation(tenantId: string, inviter: Inviter, invitation: { email: string; role: string; link: string }): Promise<MailOutcome> {
  const tenant = await (await getDb()).tenant.findUnique({ where: { id: tenantId }, select: { name: true } });
  return sendInvitationMail(
    invitationMessage({
      to: invitation.email,
      tenantName: tenant?.name ?? "a tenant",
      role: invitation.role,
      link: invitation.link,
      inviter: inviter.email ?? "Someone",
    }),
  );
}

type InvitationRow = { id: string; email: string; role: string | null; expiresAt: Date };
const sentInvitation = (row: InvitationRow, link: string, mail: MailOutcome) => ({
  id: row.id,
  email: row.email,
  role: row.role ?? "member",
  expires_at: row.expiresAt.toISOString(),
  link,
  email_sent: mail.sent,
  email_error: mail.error,
});

export async function inviteMember(db: TenantDb, inviter: Inviter, actor: AuditActor, input: InviteMemberInput, origin: string) {
  const { tenantId } = db;
  const email = input.email.trim().toLowerCase();
  const invitation = await db.$transaction(async (tx) => {
    await lockTenant(tx);
    await assertInvitable(tx, tenantId, inviter, email, input.role);
    const row = await tx.invitation.create({
      data: { id: randomUUID(), organizationId: tenantId, email, role: input.role, status: "pending", expiresAt: expiry(), inviterId: inviter.userId },
    });
    await recordAudit(tx, { ...actor, action: "member.invited", targetType: "invitation", targetId: row.id, details: { email, role: input.role } });
    return row;
  });
  const link = invitationLink(origin, invitation.id);
  return sentInvitation(invitation, link, await mailInvitation(tenantId, inviter, { email, role: input.role, link }));
}

/** A pending invitation of this tenant that the caller may manage (an owner's invitation needs an owner). */
async function manageableInvitation(tx: TenantTx, tenantId: string, inviter: Inviter, id: string) {
  const row = await tx.invitation.findFirst({ where: { id, organizationId: tenantId, status: "pending" } });
  if (!row) throw new AppError("not_found", "no pending invitation with this id", { field: "invitation_id" });
  if (row.role === "owner" && inviter.role !== "owner")
    throw new AppError("forbidden", "only an owner can manage an owner's invitation", { field: "invitation_id" });
  return row;
}

/** Resend: the same link, valid for another full period (an expired invitation comes back to life), emailed again. */
export async function resendInvitation(db: TenantDb, inviter: Inviter, actor: AuditActor, id: string, origin: string) {
  const { tenantId } = db;
  const invitation = await db.$transaction(async (tx) => {
    await lockTenant(tx);
    const row = await manageableInvitation(tx, tenantId, inviter, id);
    const updated = await tx.invitation.update({ where: { id: row.id }, data: { expiresAt: expiry() } });
    await recordAudit(tx, {
      ...actor,
      action: "member.invitation_resent",
      targetType: "invitation",
      targetId: row.id,
      details: { email: row.email, role: row.role ?? "member" },
    });
    return updated;
  });
  const link = invitationLink(origin, invitation.id);
  return sentInvitation(invitation, link, await mailInvitation(tenantId, inviter, { email: invitation.email, role: invitation.role ?? "member", link }));
}

/** Revoke: the link stops working (better-auth's accept refuses a non-pending invitation). */
export async function revokeInvitation(db: TenantDb, inviter: Inviter, actor: AuditActor, id: string) {
  const { tenantId } = db;
  return db.$transaction(async (tx) => {
    await lockTenant(tx);
    const row = await manageableInvitation(tx, tenantId, inviter, id);
    await tx.invitation.update({ where: { id: row.id }, data: { status: "canceled" } });
    await recordAudit(tx, {
      ...actor,
      action: "member.invitation_revoked",
      targetType: "invitation",
      targetId: row.id,
      details: { email: row.email, role: row.role ?? "member" },
    });
    return { id: row.id, status: "canceled" as const };
  });
}

export type InvitationState = "pending" | "expired" | "accepted" | "canceled" | "rejected" | "not_found";

/**
 * What the accept page shows to whoever holds the link (the id is an unguessable uuid): the tenant,
 * the role, the address it was sent to, its state, and whether that address already has an account
 * (sign in) or not (choose a password). An unknown id is status `not_found`.
 */
export async function describeInvitation(id: string) {
  const db = await getDb();
  const row = await db.invitation.findUnique({ where: { id }, include: { tenant: { select: { name: true } } } });
  // An answer, not a 404: the page explains it (and the browser logs no failed request).
  if (!row) return { id, email: null, role: null, tenant_name: null, status: "not_found" as InvitationState, expires_at: null, has_account: false };
  const expired = row.status === "pending" && row.expiresAt <= new Date();
  const user = await db.user.findUnique({ where: { email: row.email.toLowerCase() }, select: { id: true } });
  return {
    id: row.id,
    email: row.email,
    role: row.role ?? "member",
    tenant_name: row.tenant.name,
    status: (expired ? "expired" : row.status) as InvitationState,
    expires_at: row.expiresAt.toISOString(),
    has_account: !!user,
  };
}

/**
 * The invitee has no account: create it (email = the invited address, already verified by holding the
 * link), the membership, and mark the invitation accepted, all or nothing. Then the page signs in.
 */
export async function acceptWithNewAccount(input: AcceptWithNewAccountInput) {
  const db = await getDb();
  const passwordHash = await hashPassword(input.password);
  const invitation = await db.invitation.findUnique({ where: { id: input.id }, select: { organizationId: true } });
  if (!invitation) throw new AppError("not_found", "this invitation does not exist; ask for a new link", { field: "id" });
  return scopeToTenant(db, invitation.organizationId).$transaction(async (tx) => {
    await lockTenant(tx);
    const row = await tx.invitation.findUnique({ where: { id: input.id } });
    if (!row || row.status !== "pending" || row.expiresAt <= new Date()) {
      throw conflict("this invitation is no longer open (accepted, revoked or expired); ask for a new link", "id");
    }
    const email = row.email.toLowerCase();
    if (await tx.user.findUnique({ where: { email }, select: { id: true } })) throw conflict(`an account for ${email} exists: sign in to accept`, "id");
    const user = await insertCredentialUser(tx, { email, name: input.name.trim(), passwordHash });
    const member = await tx.member.create({ data: { id: randomUUID(), organizationId: row.organizationId, userId: user.id, role: row.role ?? "member" } });
    await tx.invitation.update({ where: { id: row.id }, data: { status: "accepted" } });
    await recordAudit(tx, {
      actorType: "user",
      actorId: user.id,
      actorLabel: email,
      action: "member.joined",
      targetType: "member",
      targetId: member.id,
      details: { email, role: member.role, invitation_id: row.id },
    });
    return { email, role: member.role };
  });
}
