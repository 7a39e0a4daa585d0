import { modelColumns, TABLE } from "./columns";
import { Prisma } from "./generated/client";
import type { TenantTx } from "./tenant-scope";

/** The tables whose rows can be locked, each with its model's columns (server/db/columns.ts). */
const TABLES = {
  offerings: modelColumns(Prisma.OfferingScalarFieldEnum),
  appointments: modelColumns(Prisma.AppointmentScalarFieldEnum),
  leads: modelColumns(Prisma.LeadScalarFieldEnum),
  conversations: modelColumns(Prisma.ConversationScalarFieldEnum),
  channel_connections: modelColumns(Prisma.ChannelConnectionScalarFieldEnum),
  calls: modelColumns(Prisma.CallScalarFieldEnum),
  webhook_deliveries: modelColumns(Prisma.WebhookDeliveryScalarFieldEnum),
} as const;

type LockableTable = keyof typeof TABLES;

/** Each table's lock statement, built once ($1 row id, $2 tenant). */
const LOCK_SQL = Object.fromEntries(
  Object.entries(TABLES).map(([table, column]) => [
    table,
    `SELECT ${column.id} FROM "${table}" WHERE ${column.id} = $1::uuid AND ${column.tenantId} = $2::uuid FOR UPDATE`,
  ]),
) as Record<LockableTable, string>;

const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);
const LOCK_TENANT_SQL = `SELECT ${TENANT.id} FROM ${TABLE.Tenant} WHERE ${TENANT.id} = $1::uuid FOR UPDATE`;

/**
 * Locks the tenant's own row for the rest of the transaction: changes checked against the tenant's
 * whole membership (invitations, role changes) serialize on it.
 */
export async function lockTenant(tx: TenantTx): Promise<void> {
  await tx.$queryRawUnsafe(LOCK_TENANT_SQL, tx.tenantId);
}

/**
 * Locks one of the tenant's rows for the rest of the transaction (read-modify-write such as an
 * attributes merge must not lose a concurrent update). Returns false when the row is not the tenant's.
 */
export async function lockTenantRow(tx: TenantTx, table: LockableTable, id: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(LOCK_SQL[table], id, tx.tenantId);
  return rows.length === 1;
}
