// book_appointment runs as one statement (server/appointments/appointments.service.ts, bookAppointment)
// rather than through POST /appointments' Prisma transaction: the rows it leaves (appointment, event,
// webhook deliveries, tool-call record), the wake-up of the delivery workers, and its refusals must be
// those of POST /appointments and of withToolCall.
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { databaseKind } from "../../server/db/location";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { onOutboxWrite, OUTBOX_CHANNEL } from "../../server/outbox/outbox-signal";
import { call, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { makeConversation } from "../helpers/conversations";
import { dashboardCaller } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const HOUR = 3_600_000;
const MISSING = "00000000-0000-4000-8000-000000000000";
const NOT_FOUND = { error: { code: "not_found", message: "resource not found" } };

beforeAll(async () => {
  await openDatabase();
});

/** A tenant with a conversation, its lead, an offering, and subscriptions of which one matches booking.created. */
async function bookingTenant() {
  const { tenantId, key } = await tenantWithKey();
  const owner = dashboardCaller(tenantId);
  await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/off", events: ["booking.created"], enabled: false });
  const matching = await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/on", events: ["booking.created", "lead.created"] });
  await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/other", events: ["booking.cancelled"] });
  const conversation = await makeConversation(tenantId);
  const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body;
  const offering = (await call("POST", "/offerings", { key, body: { title: "Marina flat", price: 1, price_currency: "AED" } })).body;
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  return { tenantId, key, db, matchingId: (matching as { id: string }).id, conversation, lead, offering };
}

/** Offerings are deleted softly (there is no DELETE endpoint; a deleted one is invisible to bookings). */
const softDelete = (db: Awaited<ReturnType<typeof bookingTenant>>["db"], id: string) => db.offering.update({ where: { id }, data: { deletedAt: new Date() } });

/** A booking of exactly one hour: start and end from one reading of the clock (two readings can be 1 ms apart). */
const body = (refs: { conversation_id: string; lead_id: string; offering_id: string }, hours: number) => {
  const start = Date.now() + hours * HOUR;
  return {
    customer_name: "Ali Reza",
    customer_phone: "+971501234567",
    customer_email: "ali@example.com",
    scheduled_start: new Date(start).toISOString(),
    scheduled_end: new Date(start + HOUR).toISOString(),
    location_text: "Marina Gate 2, lobby",
    google_calendar_event_id: "gcal-1",
    ...refs,
  };
};

/** What a booking left behind, without its own ids and times: the appointment row, its event, its deliveries. */
async function rowsOf(db: Awaited<ReturnType<typeof bookingTenant>>["db"], appointmentId: string) {
  const { id, createdAt, updatedAt, scheduledStart, scheduledEnd, ...appointment } = await db.appointment.findFirstOrThrow({ where: { id: appointmentId } });
  const events = (await db.event.findMany({})).filter((e) => (e.data as { object: { id: string } }).object.id === appointmentId);
  expect(events).toHaveLength(1);
  const deliveries = await db.webhookDelivery.findMany({ where: { eventId: events[0].id } });
  return {
    appointment,
    times: { createdIsUpdated: createdAt.getTime() === updatedAt.getTime(), length: scheduledEnd.getTime() - scheduledStart.getTime() },
    event: { type: events[0].type, data: events[0].data },
    deliveries: deliveries.map(({ id, eventId, seq, createdAt, updatedAt, nextAttemptAt, ...rest }) => ({ ...rest, due: nextAttemptAt !== null })),
  };
}

describe("book_appointment writes what POST /appointments writes", () => {
  it("the same appointment row, booking.created event and one delivery per enabled matching subscription", async () => {
    const t = await bookingTenant();
    const refs = { conversation_id: t.conversation.id, lead_id: t.lead.id, offering_id: t.offering.id };
    const tool = await callTool(t.key, "book_appointment", { ...body(refs, 30), tool_call_id: "call-1" });
    const api = await call("POST", "/appointments", { key: t.key, body: body(refs, 30) });
    expect([tool.status, api.status]).toEqual([200, 201]);
    const viaTool = await rowsOf(t.db, tool.body.id);
    const viaApi = await rowsOf(t.db, api.body.id);
    expect(viaTool.event).toEqual({ type: "booking.created", data: { object: tool.body } });
    expect(viaApi.event).toEqual({ type: "booking.created", data: { object: api.body } });
    expect(viaTool.deliveries).toEqual([
      {
        tenantId: t.tenantId,
        subscriptionId: t.matchingId,
        status: "pending",
        cycle: 1,
        attemptCount: 0,
        due: true,
        lockedUntil: null,
        attemptStartedAt: null,
        inngestRunId: null,
        lastStatusCode: null,
        responseBody: null,
        deliveredAt: null,
      },
    ]);
    expect({ ...viaTool, event: undefined }).toEqual({ ...viaApi, event: undefined });
    expect(viaTool.times).toEqual({ createdIsUpdated: true, length: HOUR });
    // The answer is the stored row as GET /appointments shows it.
    const listed = (await call("GET", "/appointments?limit=100", { key: t.key })).body.data;
    expect(listed.find((a: { id: string }) => a.id === tool.body.id)).toEqual(tool.body);
    expect(listed.find((a: { id: string }) => a.id === api.body.id)).toEqual(api.body);
  });

  it("wakes the delivery workers when it wrote deliveries (in this process, and by NOTIFY on PostgreSQL)", async () => {
    const t = await bookingTenant();
    const refs = { conversation_id: t.conversation.id, lead_id: t.lead.id, offering_id: t.offering.id };
    const signalled = new Promise<void>((resolve) => {
      const stop = onOutboxWrite(() => {
        stop();
        resolve();
      });
    });
    let listener: pg.Client | null = null;
    let notified: Promise<string> | null = null;
    if (databaseKind() === "postgres") {
      listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await listener.connect();
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      const client = listener;
      notified = new Promise((resolve) => client.once("notification", (n) => resolve(n.channel)));
    }
    try {
      expect((await callTool(t.key, "book_appointment", body(refs, 40))).status).toBe(200);
      await signalled;
      if (notified) expect(await notified).toBe(OUTBOX_CHANNEL);
    } finally {
      await listener?.end();
    }
  });

  it("a deleted offering, another tenant's lead or a missing conversation is the same 404, leaving nothing and no tool-call record", async () => {
    const t = await bookingTenant();
    const other = await bookingTenant();
    const refs = { conversation_id: t.conversation.id, lead_id: t.lead.id, offering_id: t.offering.id };
    const gone = (await call("POST", "/offerings", { key: t.key, body: { title: "Sold", price: 1, price_currency: "AED" } })).body;
    await softDelete(t.db, gone.id);
    const eventsBefore = await t.db.event.count({});
    const refused = [
      { ...refs, offering_id: gone.id },
      { ...refs, lead_id: other.lead.id },
      { ...refs, conversation_id: MISSING },
    ];
    for (const [i, r] of refused.entries()) {
      const res = await callTool(t.key, "book_appointment", { ...body(r, 50), tool_call_id: `refused-${i}` });
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    }
    expect([await t.db.appointment.count({}), await t.db.event.count({}), await t.db.toolCall.count({})]).toEqual([0, eventsBefore, 0]);
    // The refused id left no record: with valid references it books.
    const retried = await callTool(t.key, "book_appointment", { ...body(refs, 50), tool_call_id: "refused-0" });
    expect(retried.status).toBe(200);
    expect(await t.db.appointment.count({})).toBe(1);
  });

  it("a repeat answers the first result even once a referenced offering is deleted, booking and emitting nothing", async () => {
    const t = await bookingTenant();
    const refs = { conversation_id: t.conversation.id, lead_id: t.lead.id, offering_id: t.offering.id };
    const first = await callTool(t.key, "book_appointment", { ...body(refs, 60), tool_call_id: "repeat-me" });
    expect(first.status).toBe(200);
    await softDelete(t.db, t.offering.id);
    const events = await t.db.event.count({});
    const again = await callTool(t.key, "book_appointment", { ...body(refs, 60), tool_call_id: "repeat-me" });
    expect([again.status, again.text]).toEqual([200, first.text]);
    expect([await t.db.appointment.count({}), await t.db.event.count({}), await t.db.toolCall.count({})]).toEqual([1, events, 1]);
  });
});
