// Dashboard-only reads: the current account, members and invitations. API keys reuse
// server/auth/api-keys.ts, invitations are issued by ./invitations.ts (both record audit entries).
import type { Db } from "../db/database";
import { notFound } from "../lib/errors";

export async function currentAccount(db: Db, user: { userId: string; tenantId: string; role: string }) {
  const [row, tenant, tenants] = await Promise.all([
    db.user.findUnique({ where: { id: user.userId }, select: { id: true, email: true, name: true } }),
    db.tenant.findUnique({ where: { id: user.tenantId }, select: { id: true, name: true, slug: true } }),
    db.member.count({ where: { userId: user.userId } }),
  ]);
  if (!row || !tenant) throw notFound();
  return { user: row, tenant, role: user.role, tenant_count: tenants };
}

// Members are keyed by `organization_id` (better-auth's column), so they are filtered here by the
// principal's tenant explicitly; the tenant-scoped client covers `tenant_id` tables only. Pending
// invitations include expired ones (a resend revives them), by id: their links are not in any list
// (only the secret's hash is stored; a resend makes a new link).
export async function listMembers(db: Db, tenantId: string) {
  const [members, invitations] = await Promise.all([
    db.member.findMany({
      where: { organizationId: tenantId },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      include: { user: { select: { email: true, name: true } } },
    }),
    db.invitation.findMany({
      where: { organizationId: tenantId, status: "pending" },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 200,
      select: { id: true, email: true, role: true, expiresAt: true, createdAt: true },
    }),
  ]);
  const now = new Date();
  return {
    members: members.map((m) => ({ id: m.id, user_id: m.userId, email: m.user.email, name: m.user.name, role: m.role, created_at: m.createdAt.toISOString() })),
    invitations: invitations.map((i) => ({
      id: i.id,
      email: i.email,
      role: i.role ?? "member",
      expires_at: i.expiresAt.toISOString(),
      created_at: i.createdAt.toISOString(),
      expired: i.expiresAt <= now,
    })),
  };
}
