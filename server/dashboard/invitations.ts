// Inviting someone to a tenant: the platform's procedures (better-auth's own invitation endpoints are
// closed, see organization-endpoints.ts). An invitation is opened by the secret its link carries
// (invitation-secret.ts), never by its id, which every member sees in the list and the audit log.
// The secret is shown once, in the answer to the invite or resend that made it (and in the email to the
// invitee); a resend replaces it, and accepting uses it up. Someone without an account sets a password
// (`acceptWithNewAccount`, which creates the user and the membership in one transaction); someone with
// one signs in and accepts (`acceptAsSignedInUser`). Every change is written with its audit entry in one
// transaction, under a lock on the tenant row so that concurrent invitations cannot both pass the
// duplicate checks and two accepts of one link cannot both join.
import { randomUUID } from "node:crypto";
import { type Db, getDb } from "../db/client";
import { lockTenant } from "../db/lock-row";
import { scopeToTenant, type TenantDb, type TenantTx } from "../db/tenant-scope";
import { AppError, conflict } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import type { Role } from "../auth/principal";
import type { AcceptWithNewAccountInput, InviteMemberInput } from "./dashboard.types";
import { invitationMessage, sendInvitationMail, type MailOutcome } from "./invitation-mail";
import { hashInvitationSecret, newInvitationSecret } from "./invitation-secret";
import { hashPassword, insertCredentialUser } from "./users";

export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** Pending invitations per tenant (better-auth's own default limit). */
const MAX_PENDING_INVITATIONS = 100;

type Inviter = { userId: string; role: Role; email?: string };

/**
 * The page an invitee opens: `<dashboard origin>/accept-invitation#secret=<secret>`. The secret is in the
 * fragment, which a browser never sends to a server: no access log or proxy on the way sees it (the page
 * sends it in a POST body).
 */
const invitationLink = (origin: string, secret: string) => `${origin}/accept-invitation#secret=${secret}`;

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
  const { secret, secretHash } = newInvitationSecret();
  const invitation = await db.$transaction(async (tx) => {
    await lockTenant(tx);
    await assertInvitable(tx, tenantId, inviter, email, input.role);
    const row = await tx.invitation.create({
      data: {
        id: randomUUID(),
        organizationId: tenantId,
        email,
        role: input.role,
        status: "pending",
        expiresAt: expiry(),
        inviterId: inviter.userId,
        secretHash,
      },
    });
    await recordAudit(tx, { ...actor, action: "member.invited", targetType: "invitation", targetId: row.id, details: { email, role: input.role } });
    return row;
  });
  const link = invitationLink(origin, secret);
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

/**
 * Resend: a new link (a new secret; the previous link stops working), valid for another full period (an
 * expired invitation comes back to life), emailed again. The only way to see a link again: it is stored hashed.
 */
export async function resendInvitation(db: TenantDb, inviter: Inviter, actor: AuditActor, id: string, origin: string) {
  const { tenantId } = db;
  const { secret, secretHash } = newInvitationSecret();
  const invitation = await db.$transaction(async (tx) => {
    await lockTenant(tx);
    const row = await manageableInvitation(tx, tenantId, inviter, id);
    const updated = await tx.invitation.update({ where: { id: row.id }, data: { expiresAt: expiry(), secretHash } });
    await recordAudit(tx, {
      ...actor,
      action: "member.invitation_resent",
      targetType: "invitation",
      targetId: row.id,
      details: { email: row.email, role: row.role ?? "member" },
    });
    return updated;
  });
  const link = invitationLink(origin, secret);
  return sentInvitation(invitation, link, await mailInvitation(tenantId, inviter, { email: invitation.email, role: invitation.role ?? "member", link }));
}

/** Revoke: the link stops working (only a pending invitation is accepted). */
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

type InvitationState = "pending" | "expired" | "accepted" | "canceled" | "rejected" | "not_found";

/** The invitation a link's secret opens (one indexed read of its hash), or null. */
const invitationOfSecret = async (db: Db, secret: string) =>
  db.invitation.findUnique({ where: { secretHash: hashInvitationSecret(secret) }, include: { tenant: { select: { name: true } } } });

type OpenedInvitation = NonNullable<Awaited<ReturnType<typeof invitationOfSecret>>>;

const isOpen = (row: { status: string; expiresAt: Date }) => row.status === "pending" && row.expiresAt > new Date();

const NOT_FOUND_MESSAGE = "this invitation link is not valid (a newer link may have replaced it); ask for a new link";
const CLOSED_MESSAGE = "this invitation is no longer open (accepted, revoked or expired); ask for a new link";

/** The pending, unexpired invitation of a secret, or the 404 / 409 that says why not. */
async function openInvitation(db: Db, secret: string): Promise<OpenedInvitation> {
  const row = await invitationOfSecret(db, secret);
  if (!row) throw new AppError("not_found", NOT_FOUND_MESSAGE, { field: "secret" });
  if (!isOpen(row)) throw conflict(CLOSED_MESSAGE, "secret");
  return row;
}

/**
 * What the accept page shows to whoever holds the link's secret: the tenant, the role, the address it
 * was sent to, its state, and whether that address already has an account (sign in) or not (choose a
 * password). An unknown secret is status `not_found`.
 */
export async function describeInvitation(secret: string) {
  const db = await getDb();
  const row = await invitationOfSecret(db, secret);
  // An answer, not a 404: the page explains it (and the browser logs no failed request).
  if (!row) return { id: null, email: null, role: null, tenant_name: null, status: "not_found" as InvitationState, expires_at: null, has_account: false };
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
 * Inside the tenant's locked transaction: the invitation is still the one the secret opened and still
 * open (a concurrent accept, revoke or resend since the first read makes this 409), then the membership,
 * the invitation marked accepted (the link is used up) and the audit entry, together.
 */
async function join(tx: TenantTx, opened: OpenedInvitation, joiner: () => Promise<{ id: string; email: string }>) {
  await lockTenant(tx);
  const row = await tx.invitation.findFirst({ where: { id: opened.id, secretHash: opened.secretHash } });
  if (!row || !isOpen(row)) throw conflict(CLOSED_MESSAGE, "secret");
  const user = await joiner();
  const existing = await tx.member.findFirst({ where: { organizationId: row.organizationId, userId: user.id }, select: { id: true } });
  if (existing) throw conflict(`${user.email} is already a member of this tenant`, "secret");
  const member = await tx.member.create({ data: { id: randomUUID(), organizationId: row.organizationId, userId: user.id, role: row.role ?? "member" } });
  await tx.invitation.update({ where: { id: row.id }, data: { status: "accepted" } });
  await recordAudit(tx, {
    actorType: "user",
    actorId: user.id,
    actorLabel: user.email,
    action: "member.joined",
    targetType: "member",
    targetId: member.id,
    details: { email: user.email, role: member.role, invitation_id: row.id },
  });
  return { tenant_id: row.organizationId, email: user.email, role: member.role };
}

/**
 * The invitee has no account: create it (email = the invited address, shown to whoever holds the link),
 * the membership, and mark the invitation accepted, all or nothing. Then the page signs in.
 *
 * Every check that needs only the database runs before the password is hashed (~100 ms of CPU), so an
 * unknown or closed link costs a read: `hash` is a parameter so that a test can see it is not called.
 */
export async function acceptWithNewAccount(input: AcceptWithNewAccountInput, hash: (password: string) => Promise<string> = hashPassword) {
  const db = await getDb();
  const opened = await openInvitation(db, input.secret);
  const email = opened.email.toLowerCase();
  const refusal = () => conflict(`an account for ${email} exists: sign in to accept`, "secret");
  if (await db.user.findUnique({ where: { email }, select: { id: true } })) throw refusal();
  const passwordHash = await hash(input.password);
  const joined = await scopeToTenant(db, opened.organizationId).$transaction((tx) =>
    join(tx, opened, async () => {
      if (await tx.user.findUnique({ where: { email }, select: { id: true } })) throw refusal();
      return insertCredentialUser(tx, { email, name: input.name.trim(), passwordHash });
    }),
  );
  return { email: joined.email, role: joined.role };
}

/**
 * A signed-in invitee accepts: their account's address must be the invited one (the secret proves they
 * hold the link, the session that they own the address). The caller makes the tenant the session's active one.
 */
export async function acceptAsSignedInUser(user: { id: string; email: string }, secret: string) {
  const db = await getDb();
  const opened = await openInvitation(db, secret);
  if (opened.email.toLowerCase() !== user.email.toLowerCase()) {
    throw new AppError("forbidden", "this invitation was sent to another address: sign in with the address it was sent to", { field: "secret" });
  }
  return scopeToTenant(db, opened.organizationId).$transaction((tx) => join(tx, opened, async () => ({ id: user.id, email: user.email.toLowerCase() })));
}
