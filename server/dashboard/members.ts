// Changing a member's role and removing a member, with the role rules: owners manage everyone,
// admins manage members (and may make a member an admin), nobody manages without a manager role
// (managerProcedure), and the tenant always keeps an owner. Each change is audited in the same
// transaction, under the tenant-row lock that invitations take too, so two concurrent demotions
// cannot both see "another owner remains".
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { AppError } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import type { Role } from "../auth/principal";
import type { ChangeMemberRoleInput } from "./dashboard.types";
import { lockTenant } from "../db/lock-row";

type Manager = { userId: string; role: Role };

async function targetMember(tx: TenantTx, tenantId: string, memberId: string) {
  const member = await tx.member.findFirst({ where: { id: memberId, organizationId: tenantId }, include: { user: { select: { email: true } } } });
  if (!member) throw new AppError("not_found", "no member with this id in this tenant", { field: "member_id" });
  return member;
}

/** An admin acts on members only; an owner on anyone. */
function assertMayManage(manager: Manager, targetRole: string, verb: string) {
  if (manager.role !== "owner" && targetRole !== "member") {
    throw new AppError("forbidden", `an admin can ${verb} members only; ask an owner`, { field: "member_id" });
  }
}

async function assertAnotherOwnerRemains(tx: TenantTx, tenantId: string, verb: string) {
  const owners = await tx.member.count({ where: { organizationId: tenantId, role: "owner" } });
  if (owners <= 1) throw new AppError("conflict", `cannot ${verb} the last owner; make someone else an owner first`, { field: "member_id" });
}

export async function changeMemberRole(db: TenantDb, manager: Manager, actor: AuditActor, input: ChangeMemberRoleInput) {
  const { tenantId } = db;
  return db.$transaction(async (tx) => {
    await lockTenant(tx);
    const member = await targetMember(tx, tenantId, input.member_id);
    assertMayManage(manager, member.role, "change the role of");
    if (input.role === "owner" && manager.role !== "owner") throw new AppError("forbidden", "only an owner can make an owner", { field: "role" });
    if (member.role === input.role) return { id: member.id, email: member.user.email, role: member.role };
    if (member.role === "owner") await assertAnotherOwnerRemains(tx, tenantId, "demote");
    await tx.member.update({ where: { id: member.id }, data: { role: input.role } });
    await recordAudit(tx, {
      ...actor,
      action: "member.role_changed",
      targetType: "member",
      targetId: member.id,
      details: { email: member.user.email, role: input.role, previous_role: member.role },
    });
    return { id: member.id, email: member.user.email, role: input.role };
  });
}

/** Removal takes effect on the member's next request (identity.ts reads the membership every time). */
export async function removeMember(db: TenantDb, manager: Manager, actor: AuditActor, memberId: string) {
  const { tenantId } = db;
  return db.$transaction(async (tx) => {
    await lockTenant(tx);
    const member = await targetMember(tx, tenantId, memberId);
    assertMayManage(manager, member.role, "remove");
    if (member.role === "owner") await assertAnotherOwnerRemains(tx, tenantId, "remove");
    await tx.member.delete({ where: { id: member.id } });
    await recordAudit(tx, {
      ...actor,
      action: "member.removed",
      targetType: "member",
      targetId: member.id,
      details: { email: member.user.email, role: member.role },
    });
    return { id: member.id, removed: true as const };
  });
}
