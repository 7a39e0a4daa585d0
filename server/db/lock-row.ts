import type { TenantTx } from "./tenant-scope";

const TABLES = {
  offerings: "offerings",
  appointments: "appointments",
  leads: "leads",
  conversations: "conversations",
  channel_connections: "channel_connections",
  calls: "calls",
  webhook_deliveries: "webhook_deliveries",
} as const;

/**
 * Locks one of the tenant's rows for the rest of the transaction (read-modify-write such as an
 * attributes merge must not lose a concurrent update). Returns false when the row is not the tenant's.
 */
export async function lockTenantRow(tx: TenantTx, table: keyof typeof TABLES, id: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM "${TABLES[table]}" WHERE id = $1::uuid AND tenant_id = $2::uuid FOR UPDATE`,
    id,
    tx.tenantId,
  );
  return rows.length === 1;
}
