import type { Prisma } from "../db/generated/client";
import type { TenantTx } from "../db/tenant-scope";

export type AuditActor = { actorType: string; actorId: string | null; actorLabel: string | null };

/** Writes one audit entry inside the caller's transaction, so the change and its record commit together. */
export async function recordAudit(
  tx: Pick<TenantTx, "auditLog">,
  entry: AuditActor & { action: string; targetType: string; targetId: string | null; details?: Prisma.InputJsonValue },
): Promise<void> {
  await tx.auditLog.create({ data: { ...entry, details: entry.details ?? {} } as Prisma.AuditLogUncheckedCreateInput });
}

export const OPERATOR: AuditActor = { actorType: "operator", actorId: null, actorLabel: "cli" };
