import { modelColumns, TABLE } from "./columns";
import { Prisma } from "./generated/client";
import type { TenantTx } from "./tenant-scope";
import { queryOn } from "./database";
import { statement } from "../lib/sql";

/** The models whose rows can be locked, each with its columns (server/db/columns.ts). */
const LOCKABLE = {
  Offering: modelColumns(Prisma.OfferingScalarFieldEnum),
  Appointment: modelColumns(Prisma.AppointmentScalarFieldEnum),
  Lead: modelColumns(Prisma.LeadScalarFieldEnum),
  Conversation: modelColumns(Prisma.ConversationScalarFieldEnum),
  ChannelConnection: modelColumns(Prisma.ChannelConnectionScalarFieldEnum),
  Call: modelColumns(Prisma.CallScalarFieldEnum),
  WebhookDelivery: modelColumns(Prisma.WebhookDeliveryScalarFieldEnum),
} as const;

type LockableModel = keyof typeof LOCKABLE;

/** Each model's lock statement, built once ($1 row id, $2 tenant). */
const LOCK_SQL = Object.fromEntries(
  Object.entries(LOCKABLE).map(([model, column]) => [
    model,
    `SELECT ${column.id} FROM ${TABLE[model as LockableModel]} WHERE ${column.id} = $1::uuid AND ${column.tenantId} = $2::uuid FOR UPDATE`,
  ]),
) as Record<LockableModel, string>;

const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);
const LOCK_TENANT_SQL = statement(`SELECT ${TENANT.id} FROM ${TABLE.Tenant} WHERE ${TENANT.id} = $1::uuid FOR UPDATE`);

/**
 * Locks the tenant's own row for the rest of the transaction: changes checked against the tenant's
 * whole membership (invitations, role changes) serialize on it.
 */
export async function lockTenant(tx: TenantTx): Promise<void> {
  await queryOn(tx, LOCK_TENANT_SQL, [tx.tenantId]);
}

/**
 * Locks one of the tenant's rows for the rest of the transaction (read-modify-write such as an
 * attributes merge must not lose a concurrent update). Returns false when the row is not the tenant's.
 */
export async function lockTenantRow(tx: TenantTx, model: LockableModel, id: string): Promise<boolean> {
  const rows = await queryOn(tx, statement<{ id: string }>(LOCK_SQL[model]), [id, tx.tenantId]);
  return rows.length === 1;
}
