// The retention purge: it removes exactly the rows past their retention, of the tenant whose period
// they passed, in batches, keeps every analytics total as it was, keeps events still being
// delivered, and continues where an interrupted run stopped.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { weeklyRollup } from "../../server/analytics/analytics.service";
import { effectiveDays, purgeExpired, retentionUpdate } from "../../server/retention/retention";
import { startRetentionJob, stopRetentionJob } from "../../server/retention/retention-job";
import { RETENTION_COMMANDS } from "../../server/retention/retention.cli";
import { UsageError } from "../../server/lib/cli";
import { dashboardCaller, newTenant } from "../helpers/api";
import { toAppError } from "../../server/lib/errors";
import { countsOf, seedAged, subscriptionRow } from "./seed";

const db = async () => (await openDatabase()).prisma;
const rollup = async (tenantId: string) => weeklyRollup(scopeToTenant((await openDatabase()).prisma, tenantId), { days: 90 });

describe("retention purge", () => {
  it("removes_only_the_rows_past_the_tenant_s_period_in_batches_and_keeps_analytics_totals", async () => {
    const a = await newTenant("Retention A");
    const b = await newTenant("Retention B");
    const db = (await openDatabase()).prisma;
    // A keeps 7 days of everything; B keeps the operator's defaults (365/90/30/365/90 days).
    await RETENTION_COMMANDS["tenant retention"]([a.id], {
      "messages-days": "7",
      "call-recordings-days": "7",
      "events-days": "7",
      "audit-log-days": "7",
      "notifications-days": "7",
    });
    const subA = await subscriptionRow(a.id);
    const subB = await subscriptionRow(b.id);
    // Ages in days: 20 and 10 are past A's 7 days, 1 is not. 3 messages per age.
    await seedAged(a.id, [20, 10, 1], { subscriptionId: subA.id, messagesPerAge: 3 });
    await seedAged(b.id, [20, 10, 1], { subscriptionId: subB.id, messagesPerAge: 3 });
    // An old event of A still being delivered stays until its delivery ends.
    await seedAged(a.id, [15], { subscriptionId: subA.id, pending: true, messagesPerAge: 0 });

    const beforeA = await rollup(a.id);
    const beforeB = await countsOf(b.id);
    expect(beforeA.totals.messages).toEqual({ inbound: 6, outbound: 3 });
    // audit: 4 seeded and the retention change's own entry; events: 4 seeded and 2 conversation.created (today)
    expect(await countsOf(a.id)).toEqual({ messages: 9, recordings: 4, calls: 4, events: 6, deliveries: 4, attempts: 3, audit: 5, notifications: 4 });

    // Batches of 2: 6 old messages take 3 full batches and an empty one.
    const counts = await purgeExpired({ tenantId: a.id, batch: 2, pauseMs: 0 });
    expect(counts).toEqual({ messages: 6, call_recordings: 3, events: 2, audit_log: 3, notifications: 3 });

    expect(await countsOf(a.id)).toEqual({ messages: 3, recordings: 1, calls: 4, events: 4, deliveries: 2, attempts: 1, audit: 2, notifications: 1 });
    const left = await db.message.findMany({ where: { tenantId: a.id }, select: { body: true }, orderBy: { body: "asc" } });
    expect(left.map((m) => m.body)).toEqual(["message 1d #0", "message 1d #1", "message 1d #2"]);
    const events = await db.event.findMany({ where: { tenantId: a.id, type: "offering.created" }, select: { data: true } });
    expect(events.map((e) => (e.data as { object: { age: number } }).object.age).sort()).toEqual([1, 15]);
    // Calls stay (times, status); their recording and summary are gone.
    const oldCall = await db.call.findFirst({ where: { tenantId: a.id, summary: null } });
    expect(oldCall).toMatchObject({ recordingUrl: null, status: "completed" });

    // Analytics: the same totals and the same daily series, though the messages behind them are gone.
    const afterA = await rollup(a.id);
    expect(afterA.totals).toEqual(beforeA.totals);
    expect(afterA.daily).toEqual(beforeA.daily);
    // The other tenant: untouched.
    expect(await countsOf(b.id)).toEqual(beforeB);

    // A second run finds nothing more.
    expect(await purgeExpired({ tenantId: a.id, batch: 2, pauseMs: 0 })).toEqual({
      messages: 0,
      call_recordings: 0,
      events: 0,
      audit_log: 0,
      notifications: 0,
    });
  });

  it("an_interrupted_purge_continues_where_it_stopped", async () => {
    const t = await newTenant("Retention resume");
    await RETENTION_COMMANDS["tenant retention"]([t.id], { "messages-days": "3" });
    const sub = await subscriptionRow(t.id);
    await seedAged(t.id, [30, 20, 10], { subscriptionId: sub.id, messagesPerAge: 4 });
    expect((await countsOf(t.id)).messages).toBe(12);

    let batches = 0;
    const first = await purgeExpired({ tenantId: t.id, batch: 5, pauseMs: 0, shouldStop: () => batches++ >= 1 });
    expect(first.messages).toBe(5); // one batch, then stopped
    expect((await countsOf(t.id)).messages).toBe(7);
    const rest = await purgeExpired({ tenantId: t.id, batch: 5, pauseMs: 0 });
    expect(rest.messages).toBe(7);
    expect((await countsOf(t.id)).messages).toBe(0);
  });

  it("every_server_process_s_periodic_job_purges_in_the_background_and_continues_due_deletions", async () => {
    const t = await newTenant("Retention job");
    const gone = await newTenant("Retention job deleted");
    await RETENTION_COMMANDS["tenant retention"]([t.id], { "messages-days": "2" });
    const sub = await subscriptionRow(t.id);
    await seedAged(t.id, [5, 1], { subscriptionId: sub.id, messagesPerAge: 2 });
    await (await openDatabase()).prisma.tenant.update({ where: { id: gone.id }, data: { suspendedAt: new Date(), deleteAfter: new Date() } });
    startRetentionJob(50);
    try {
      await expect.poll(async () => (await countsOf(t.id)).messages, { timeout: 15_000, interval: 50 }).toBe(2);
      await expect.poll(() => db().then((d) => d.tenant.count({ where: { id: gone.id } })), { timeout: 15_000, interval: 50 }).toBe(0);
    } finally {
      await stopRetentionJob();
    }
  });

  it("a_tenant_period_past_the_operator_s_bound_is_refused_naming_the_field", async () => {
    const t = await newTenant("Retention bounds");
    const set = (flags: Record<string, string>) => RETENTION_COMMANDS["tenant retention"]([t.id], flags);
    await expect(set({ "messages-days": "366" })).rejects.toThrow(
      new UsageError("--messages-days: messages must be a whole number of days from 1 to 365, the operator's bound (RETENTION_MESSAGES_DAYS); got 366"),
    );
    await expect(set({ "events-days": "0" })).rejects.toThrow(/^--events-days: events must be a whole number of days from 1 to 30/);
    await expect(set({ "audit-log-days": "soon" })).rejects.toThrow(new UsageError("--audit-log-days must be a whole number of days or 'default'"));
    expect(retentionUpdate({ notifications: 1.5 })).toEqual({
      field: "notifications",
      message: expect.stringMatching(/^notifications must be a whole number/),
    });

    const shown = (await set({ "messages-days": "30" })) as { retention: Record<string, unknown> };
    expect(shown.retention.messages).toEqual({ days: 30, tenant_days: 30, operator_days: 365, max_days: 365 });
    expect(shown.retention.events).toEqual({ days: 30, tenant_days: null, operator_days: 30, max_days: 30 });
    const reset = (await set({ "messages-days": "default" })) as { retention: Record<string, unknown> };
    expect(reset.retention.messages).toEqual({ days: 365, tenant_days: null, operator_days: 365, max_days: 365 });
  });

  it("dashboard_owners_set_periods_within_the_bound_and_a_period_past_it_is_a_400_naming_the_class", async () => {
    const t = await newTenant("Retention dashboard");
    const refusal = async (p: Promise<unknown>) => {
      const e = toAppError(
        await p.then(
          () => null,
          (err) => err,
        ),
      );
      return { status: e.status, code: e.errorCode, message: e.message, field: e.field };
    };
    expect(await refusal(dashboardCaller(t.id, "owner").retention.update({ events: 31 }))).toEqual({
      status: 400,
      code: "bad_request",
      message: "invalid field 'events': events must be a whole number of days from 1 to 30, the operator's bound (RETENTION_EVENTS_DAYS); got 31",
      field: "events",
    });
    expect(await refusal(dashboardCaller(t.id, "owner").retention.update({ messages: 0 }))).toMatchObject({ status: 400, field: "messages" });
    expect(await refusal(dashboardCaller(t.id, "admin").retention.update({ messages: 30 }))).toMatchObject({ status: 403, code: "forbidden" });
    const view = await dashboardCaller(t.id, "owner").retention.update({ messages: 30, notifications: 7 });
    expect(view.messages).toEqual({ days: 30, tenant_days: 30, operator_days: 365, max_days: 365 });
    expect((await dashboardCaller(t.id, "member").retention.get()).notifications).toEqual({ days: 7, tenant_days: 7, operator_days: 90, max_days: 90 });
    const audit = await (await openDatabase()).prisma.auditLog.findFirstOrThrow({ where: { tenantId: t.id, action: "tenant.retention_changed" } });
    expect([audit.actorType, audit.actorId, audit.details]).toEqual(["user", "user-owner", { days: { messages: 30, notifications: 7 } }]);
  });

  it("an_operator_who_lowers_a_bound_lowers_every_tenant_s_period_with_it", () => {
    const saved = process.env.RETENTION_MESSAGES_DAYS;
    try {
      process.env.RETENTION_MESSAGES_DAYS = "20";
      expect(effectiveDays("messages", 60)).toBe(20);
      expect(effectiveDays("messages", 10)).toBe(10);
      expect(effectiveDays("messages", null)).toBe(20);
      process.env.RETENTION_MESSAGES_DAYS = "0"; // kept forever, unless the tenant says otherwise
      expect(effectiveDays("messages", null)).toBeNull();
      expect(effectiveDays("messages", 60)).toBe(60);
    } finally {
      if (saved === undefined) delete process.env.RETENTION_MESSAGES_DAYS;
      else process.env.RETENTION_MESSAGES_DAYS = saved;
    }
  });
});
