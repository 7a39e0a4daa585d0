// Dashboard users and memberships, for the operator CLI and the demo seed. Passwords are hashed by
// better-auth's own hasher (`better-auth/crypto`, its default) so its sign-in verifies them.
import { randomBytes, randomUUID } from "node:crypto";
import { database } from "../db/database";
import type { Prisma } from "../db/generated/client";
import { scopeToTenant } from "../db/tenant-scope";
import { OPERATOR, recordAudit, type AuditActor } from "../audit/record-audit";
import { conflict, notFound } from "../lib/errors";
import type { Role } from "../auth/principal";

/**
 * better-auth's password hash (scrypt, its default), loaded at the first hash: the API's router
 * reaches this module, and a process that creates no account never loads better-auth (about 30 MB).
 */
export async function hashPassword(password: string): Promise<string> {
  return (await import("better-auth/crypto")).hashPassword(password);
}

export async function createDashboardUser(input: { email: string; password: string; name: string }) {
  const email = input.email.trim().toLowerCase();
  if (input.password.length < 8) throw new Error("password must be at least 8 characters");
  const db = database().prisma;
  if (await db.user.findUnique({ where: { email }, select: { id: true } })) throw conflict(`a user with email ${email} exists`, "email");
  const passwordHash = await hashPassword(input.password);
  const user = await db.$transaction((tx) => insertCredentialUser(tx, { email, name: input.name, passwordHash }));
  return { id: user.id, email: user.email, name: user.name };
}

/** What insertCredentialUser writes with: any transaction, tenant-scoped or not (users and accounts have no tenant). */
type CredentialTables = {
  user: { create(args: { data: Prisma.UserUncheckedCreateInput }): Promise<{ id: string; email: string; name: string }> };
  account: { create(args: { data: Prisma.AccountUncheckedCreateInput }): Promise<unknown> };
};

/**
 * The rows better-auth's own sign-up writes for an email and password: a verified user and its
 * credential account (`passwordHash` from `hashPassword`), written without loading better-auth
 * (the demo seed of a first start runs in the serving process).
 */
export async function insertCredentialUser(tx: CredentialTables, input: { email: string; name: string; passwordHash: string }) {
  const user = await tx.user.create({ data: { id: randomUUID(), email: input.email, name: input.name, emailVerified: true } });
  await tx.account.create({ data: { id: randomUUID(), userId: user.id, accountId: user.id, providerId: "credential", password: input.passwordHash } });
  return user;
}

/** Adds (or changes the role of) a user's membership in a tenant; a change is audited with it. */
export async function addMember(input: { tenantId: string; email: string; role: Role }, actor: AuditActor = OPERATOR) {
  const db = database().prisma;
  const [tenant, user] = await Promise.all([
    db.tenant.findUnique({ where: { id: input.tenantId }, select: { id: true } }),
    db.user.findUnique({ where: { email: input.email.trim().toLowerCase() }, select: { id: true, email: true } }),
  ]);
  if (!tenant || !user) throw notFound();
  const key = { organizationId_userId: { organizationId: tenant.id, userId: user.id } };
  const member = await scopeToTenant(db, tenant.id).$transaction(async (tx) => {
    const before = await tx.member.findUnique({ where: key, select: { role: true } });
    const row = await tx.member.upsert({
      where: key,
      create: { id: randomUUID(), organizationId: tenant.id, userId: user.id, role: input.role },
      update: { role: input.role },
    });
    if (before?.role !== input.role) {
      await recordAudit(tx, {
        ...actor,
        action: before ? "member.role_changed" : "member.added",
        targetType: "member",
        targetId: row.id,
        details: { email: user.email, role: input.role, ...(before ? { previous_role: before.role } : {}) },
      });
    }
    return row;
  });
  return { id: member.id, tenant_id: tenant.id, user_id: user.id, email: user.email, role: member.role };
}

/** The demo tenant's owner login, created with the demo tenant on an embedded first start. */
export async function createDemoOwner(tenantId: string) {
  const email = "owner@demo.local";
  const password = randomBytes(9).toString("base64url");
  await createDashboardUser({ email, password, name: "Demo Owner" });
  await addMember({ tenantId, email, role: "owner" });
  return { email, password };
}
