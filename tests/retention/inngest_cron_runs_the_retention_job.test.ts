// With the Inngest engine the retention job runs as an hourly cron function served at /api/inngest:
// one run purges what is past its retention, as each process's periodic job does.
import { InngestTestEngine } from "@inngest/test";
import { describe, expect, it } from "vitest";
import { RETENTION_CRON, RETENTION_FUNCTION_ID } from "../../server/retention/retention.inngest";
import { retentionPurge } from "../../server/webhooks/inngest-engine";
import { RETENTION_COMMANDS } from "../../server/retention/retention.cli";
import { newTenant } from "../helpers/api";
import { countsOf, seedAged, subscriptionRow } from "./seed";

describe("the retention cron function", () => {
  it("is_served_hourly_and_a_run_purges_what_is_past_its_retention", async () => {
    expect([RETENTION_FUNCTION_ID, RETENTION_CRON]).toEqual(["retention-purge", "17 * * * *"]);
    expect(retentionPurge.id()).toBe(RETENTION_FUNCTION_ID);
    const t = await newTenant("Retention cron");
    await RETENTION_COMMANDS["tenant retention"]([t.id], { "notifications-days": "1" });
    const sub = await subscriptionRow(t.id);
    await seedAged(t.id, [3, 0], { subscriptionId: sub.id, messagesPerAge: 1 });
    expect((await countsOf(t.id)).notifications).toBe(2);
    const { result } = await new InngestTestEngine({ function: retentionPurge, events: [{ name: "inngest/scheduled.timer", data: {} } as never] }).execute();
    expect((result as { purged: { notifications: number } }).purged.notifications).toBeGreaterThanOrEqual(1);
    expect((await countsOf(t.id)).notifications).toBe(1);
  });
});
