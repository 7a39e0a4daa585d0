import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { getOpenApiDocument } from "../../server/http/openapi";
import { call, errorOf, newKey, tenantWithKey } from "../helpers/api";

const DAY = 86_400_000;
const todayUtc = () => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
};
/** A moment on the UTC day `daysAgo` days before today (hour within that day). */
const onDay = (daysAgo: number, hour = 12) => new Date(todayUtc() - daysAgo * DAY + hour * 3_600_000);
const dateOf = (daysAgo: number) => new Date(todayUtc() - daysAgo * DAY).toISOString().slice(0, 10);

const ZERO = {
  conversations: { total: 0, by_channel: { voice: 0, sms: 0, whatsapp: 0, webchat: 0, email: 0 }, handoffs: 0, closed: 0 },
  leads: { created: 0, qualified: 0, converted: 0, conversion_rate: null },
  appointments: { booked: 0, cancelled: 0, completed: 0 },
  messages: { inbound: 0, outbound: 0 },
  csat: { responses: 0, average_score: null },
};

let seq = 0;
/** Writes rows with chosen timestamps straight into one tenant's tables (the API stamps `now`). */
async function seed(tenantId: string) {
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  const conversation = (channel: string, createdAt: Date, extra: Record<string, unknown> = {}) =>
    db.conversation.create({
      data: { channel, customerIdentifier: `c${++seq}@example.com`, createdAt, ...extra } as never,
    });
  const lead = (conversationId: string, createdAt: Date, extra: Record<string, unknown> = {}) =>
    db.lead.create({ data: { conversationId, createdAt, updatedAt: createdAt, ...extra } as never });
  const appointment = (createdAt: Date, extra: Record<string, unknown> = {}) =>
    db.appointment.create({
      data: {
        customerName: "A",
        customerPhone: "+971501234567",
        scheduledStart: createdAt,
        scheduledEnd: new Date(createdAt.getTime() + 3_600_000),
        createdAt,
        updatedAt: createdAt,
        ...extra,
      } as never,
    });
  const message = (conversationId: string, direction: string, createdAt: Date) =>
    db.message.create({
      data: {
        conversationId,
        direction,
        author: direction === "inbound" ? "customer" : "assistant",
        body: "hi",
        status: direction === "inbound" ? "received" : "sent",
        createdAt,
      } as never,
    });
  return { conversation, lead, appointment, message };
}

describe("GET /analytics/weekly-rollup", () => {
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    ({ key, tenantId } = await tenantWithKey(["read"]));
    const s = await seed(tenantId);
    // Today: 2 sms + 1 voice conversations; one of them closed today.
    const c1 = await s.conversation("sms", onDay(0, 0));
    await s.conversation("sms", onDay(0, 0), { status: "closed", closedAt: onDay(0, 0) });
    await s.conversation("voice", onDay(0, 0));
    // 2 days ago: a whatsapp conversation closed then reopened (closed_at cleared: not counted).
    const c2 = await s.conversation("whatsapp", onDay(2));
    // 10 days ago: outside a 7-day window, inside a 30-day one.
    const old = await s.conversation("email", onDay(10), { status: "closed", closedAt: onDay(9) });

    // Leads created 2 days ago: one converted today (qualified yesterday), one qualified with a handoff today, one new.
    await s.lead(c2.id, onDay(2), { status: "converted", qualifiedAt: onDay(1), convertedAt: onDay(0, 0), updatedAt: onDay(0, 0) });
    await s.lead(c2.id, onDay(2), { status: "qualified", qualifiedAt: onDay(2), handoffRequestedAt: onDay(0, 0) });
    await s.lead(c2.id, onDay(2));
    // A lead created 10 days ago, converted 3 days ago: counted as converted, not in the cohort rate.
    await s.lead(old.id, onDay(10), { status: "converted", qualifiedAt: onDay(10), convertedAt: onDay(3), updatedAt: onDay(3) });

    await s.appointment(onDay(1));
    await s.appointment(onDay(1), { status: "cancelled", updatedAt: onDay(0, 0) });
    await s.appointment(onDay(5), { status: "completed", updatedAt: onDay(1) });
    await s.appointment(onDay(20), { status: "cancelled", updatedAt: onDay(20) });

    await s.message(c1.id, "inbound", onDay(0, 0));
    await s.message(c1.id, "inbound", onDay(0, 0));
    await s.message(c1.id, "outbound", onDay(0, 0));
    await s.message(c2.id, "outbound", onDay(2, 23));
    await s.message(old.id, "inbound", onDay(10));

    // Another tenant's activity today must not show.
    const other = await tenantWithKey(["read"]);
    const o = await seed(other.tenantId);
    const oc = await o.conversation("sms", onDay(0, 0), { status: "closed", closedAt: onDay(0, 0) });
    await o.lead(oc.id, onDay(0, 0), { status: "converted", qualifiedAt: onDay(0, 0), convertedAt: onDay(0, 0), handoffRequestedAt: onDay(0, 0) });
    await o.message(oc.id, "inbound", onDay(0, 0));
    await o.appointment(onDay(0, 0), { status: "completed" });
  });

  it("answers the last 7 UTC days by default, zero-filled, oldest first, ending today", async () => {
    const { tenantId: emptyTenant } = await tenantWithKey();
    const { key: emptyKey } = await newKey(emptyTenant, ["read"]);
    const res = await call("GET", "/analytics/weekly-rollup", { key: emptyKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      days: 7,
      start_date: dateOf(6),
      end_date: dateOf(0),
      totals: ZERO,
      daily: [6, 5, 4, 3, 2, 1, 0].map((ago) => ({ date: dateOf(ago), ...ZERO })),
    });
  });

  it("counts the tenant's activity per UTC day and in total, dated as documented", async () => {
    const res = await call("GET", "/analytics/weekly-rollup?days=7", { key });
    expect(res.status).toBe(200);
    expect(res.body.totals).toEqual({
      conversations: { total: 4, by_channel: { voice: 1, sms: 2, whatsapp: 1, webchat: 0, email: 0 }, handoffs: 1, closed: 1 },
      // Cohort rate: of the 3 leads created in the period, 1 is converted.
      leads: { created: 3, qualified: 2, converted: 2, conversion_rate: 0.3333 },
      appointments: { booked: 3, cancelled: 1, completed: 1 },
      messages: { inbound: 2, outbound: 2 },
      csat: { responses: 0, average_score: null },
    });
    const byDate = Object.fromEntries(res.body.daily.map((d: any) => [d.date, d]));
    expect(byDate[dateOf(0)]).toEqual({
      date: dateOf(0),
      conversations: { total: 3, by_channel: { voice: 1, sms: 2, whatsapp: 0, webchat: 0, email: 0 }, handoffs: 1, closed: 1 },
      leads: { created: 0, qualified: 0, converted: 1, conversion_rate: null },
      appointments: { booked: 0, cancelled: 1, completed: 0 },
      messages: { inbound: 2, outbound: 1 },
      csat: { responses: 0, average_score: null },
    });
    expect(byDate[dateOf(1)].leads).toEqual({ created: 0, qualified: 1, converted: 0, conversion_rate: null });
    expect(byDate[dateOf(1)].appointments).toEqual({ booked: 2, cancelled: 0, completed: 1 });
    expect(byDate[dateOf(2)].leads).toEqual({ created: 3, qualified: 1, converted: 0, conversion_rate: 0.3333 });
    expect(byDate[dateOf(2)].messages).toEqual({ inbound: 0, outbound: 1 });
    expect(byDate[dateOf(3)].leads.converted).toBe(1);
    expect(byDate[dateOf(5)]).toEqual({ date: dateOf(5), ...ZERO, appointments: { booked: 1, cancelled: 0, completed: 0 } });
  });

  it("widens with days (up to 90) and narrows to today alone with days=1", async () => {
    const month = await call("GET", "/analytics/weekly-rollup?days=30", { key });
    expect(month.status).toBe(200);
    expect(month.body.daily).toHaveLength(30);
    expect(month.body.start_date).toBe(dateOf(29));
    expect(month.body.totals.conversations.by_channel.email).toBe(1);
    expect(month.body.totals.conversations.closed).toBe(2);
    expect(month.body.totals.leads).toEqual({ created: 4, qualified: 3, converted: 2, conversion_rate: 0.5 });
    expect(month.body.totals.appointments).toEqual({ booked: 4, cancelled: 2, completed: 1 });
    expect(month.body.totals.messages).toEqual({ inbound: 3, outbound: 2 });

    const quarter = await call("GET", "/analytics/weekly-rollup?days=90", { key });
    expect(quarter.status).toBe(200);
    expect(quarter.body.daily).toHaveLength(90);
    expect(quarter.body.daily.map((d: any) => d.date)).toEqual(Array.from({ length: 90 }, (_, i) => dateOf(89 - i)));

    const today = await call("GET", "/analytics/weekly-rollup?days=1", { key });
    expect(today.body.days).toBe(1);
    expect(today.body.daily).toHaveLength(1);
    expect(today.body.start_date).toBe(dateOf(0));
    expect(today.body.totals.conversations.total).toBe(3);
  });

  it.each(["0", "91", "-1", "1.5", "abc", ""])("refuses days=%s with a 400 naming days", async (days) => {
    const res = await call("GET", `/analytics/weekly-rollup?days=${days}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'days': must be an integer from 1 to 90"));
  });

  it("refuses a repeated days parameter with a 400 naming it", async () => {
    const res = await call("GET", "/analytics/weekly-rollup?days=7&days=8", { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'days': given more than once"));
  });

  it("is documented in the OpenAPI document with a real response schema", () => {
    const doc = getOpenApiDocument() as any;
    const op = doc.paths["/analytics/weekly-rollup"].get;
    expect(op.parameters.map((p: any) => p.name)).toEqual(["days"]);
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/WeeklyRollup" });
    expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "401", "403", "429", "500", "503"]);
    const schemas = doc.components.schemas;
    // Every object schema reachable from the rollup lists its properties (no `{}` schemas).
    const seen = new Set<string>();
    const visit = (s: any) => {
      if (!s || typeof s !== "object") return;
      if (s.$ref) {
        const name = s.$ref.split("/").pop();
        if (seen.has(name)) return;
        seen.add(name);
        return visit(schemas[name]);
      }
      expect(Object.keys(s).length).toBeGreaterThan(0);
      if (s.type === "object") expect(Object.keys(s.properties ?? {}).length).toBeGreaterThan(0);
      Object.values(s.properties ?? {}).forEach(visit);
      if (s.items) visit(s.items);
      (s.anyOf ?? s.oneOf ?? s.allOf ?? []).forEach(visit);
    };
    visit(op.responses["200"].content["application/json"].schema);
    expect(seen).toContain("AnalyticsCounts");
    expect(seen).toContain("AnalyticsDay");
  });
});
