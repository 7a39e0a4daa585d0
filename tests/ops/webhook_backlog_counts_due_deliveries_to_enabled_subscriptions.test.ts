// The backlog the metrics report (read at scrape time, server/webhooks/delivery-backlog.ts): due
// deliveries to enabled subscriptions and the age of the oldest. A delivery not yet due (a retry
// waiting for its time) is no backlog, nor are deliveries to a disabled subscription (no engine
// claims them until it is enabled again). No delivery engine runs in this test process.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { readDeliveryBacklog } from "../../server/webhooks/delivery-backlog";
import { call, dashboardCaller, tenantWithKey } from "../helpers/api";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

describe("webhook backlog", () => {
  it("counts_due_deliveries_to_enabled_subscriptions_and_the_oldest_ones_age", async () => {
    const sql = (await openDatabase()).hot;
    expect(await readDeliveryBacklog(sql)).toEqual({ due: 0, oldestDueAgeSeconds: 0 });
    const { tenantId, key } = await tenantWithKey();
    const subscription = await dashboardCaller(tenantId).webhooks.createSubscription({ url: "http://127.0.0.1:9/hook", events: ["offering.created"] as never });
    for (const title of ["One", "Two", "Three"]) {
      expect((await call("POST", "/offerings", { key, body: { title, price: "1.00", price_currency: "USD" } })).status).toBe(201);
    }
    const db = (await openDatabase()).prisma;
    // Due 10 minutes, 5 minutes, and not before an hour from now.
    await db.$executeRawUnsafe(
      `UPDATE webhook_deliveries SET next_attempt_at = now() + (CASE (SELECT e.data->'object'->>'title' FROM events e WHERE e.id = event_id)
         WHEN 'One' THEN interval '-10 minutes' WHEN 'Two' THEN interval '-5 minutes' ELSE interval '1 hour' END)
       WHERE tenant_id = $1::uuid`,
      tenantId,
    );
    const backlog = await readDeliveryBacklog(sql);
    expect(backlog.due).toBe(2);
    expect(backlog.oldestDueAgeSeconds).toBeGreaterThanOrEqual(600);
    expect(backlog.oldestDueAgeSeconds).toBeLessThan(660);

    await dashboardCaller(tenantId).webhooks.updateSubscription({ id: subscription.id, enabled: false });
    expect(await readDeliveryBacklog(sql)).toEqual({ due: 0, oldestDueAgeSeconds: 0 });
  });
});
