import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { OPERATOR } from "../../server/audit/record-audit";
import { setCrmConnection } from "../../server/crm/crm-connection";

export const TOKEN = "pat-na1-super-secret-token-0123456789";

/** Gives a tenant a CRM connection the way the dashboard / CLI would. */
export async function connectCrm(tenantId: string, opts: { provider: "http" | "hubspot"; baseUrl: string; mapping: Record<string, string>; token?: string }) {
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  return setCrmConnection(db, { provider: opts.provider, base_url: opts.baseUrl, token: opts.token ?? TOKEN, field_mapping: opts.mapping }, OPERATOR);
}
