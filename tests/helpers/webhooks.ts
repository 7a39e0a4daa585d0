// Webhook test helpers: a dashboard tRPC caller for a tenant, and the delivery rows of a tenant.
export { dashboardCaller } from "./api";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { listDeliveries } from "../../server/webhooks/webhooks.service";

export async function deliveriesOf(tenantId: string, subscriptionId?: string) {
  return (await listDeliveries(scopeToTenant(await getDb(), tenantId), { limit: 100, subscription_id: subscriptionId })).data;
}
