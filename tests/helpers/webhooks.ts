// Webhook test helpers: a dashboard tRPC caller for a tenant, and the delivery rows of a tenant.
import { createCallerFactory } from "../../server/trpc";
import { appRouter } from "../../server/router";
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { listDeliveries } from "../../server/webhooks/webhooks.service";

export function dashboardCaller(tenantId: string, role: "owner" | "admin" | "member" = "owner", userId = "user-test") {
  return createCallerFactory(appRouter)({
    transport: "trpc",
    headers: new Headers(),
    requestId: "test",
    resHeaders: new Headers(),
    dashboardIdentity: async () => ({ userId, tenantId, role, email: "owner@example.test" }),
  });
}

export async function deliveriesOf(tenantId: string, subscriptionId?: string) {
  return (await listDeliveries(scopeToTenant(await getDb(), tenantId), { limit: 100, subscription_id: subscriptionId })).data;
}
