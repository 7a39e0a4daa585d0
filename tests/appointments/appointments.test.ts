import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";

let key: string;
let tenantId: string;
const START = "2026-12-01T10:00:00.000Z";
const END = "2026-12-01T11:00:00.000Z";

const book = (body: Record<string, unknown> = {}, k = key) =>
  call("POST", "/appointments", {
    key: k,
    body: { customer_name: "Layla", customer_phone: "+971501234567", scheduled_start: START, scheduled_end: END, ...body },
  });
const patch = (id: string, body: unknown, k = key) => call("PATCH", `/appointments/${id}`, { key: k, body });
const eventsOf = async (type: string, id: string) =>
  (await (await openDatabase()).prisma.event.findMany({ where: { tenantId, type }, orderBy: { createdAt: "asc" } })).filter(
    (e) => (e.data as any).object.id === id,
  );

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
});

describe("POST /appointments", () => {
  it("201_confirmed_with_every_field_and_booking_created", async () => {
    const offering = await call("POST", "/offerings", { key, body: { title: "Viewing", price: 0, price_currency: "USD" } });
    const res = await book({ customer_email: "layla@example.com", offering_id: offering.body.id, location_text: "Marina" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      customer_name: "Layla",
      customer_phone: "+971501234567",
      customer_email: "layla@example.com",
      scheduled_start: START,
      scheduled_end: END,
      status: "confirmed",
      conversation_id: null,
      lead_id: null,
      offering_id: offering.body.id,
      location_text: "Marina",
      google_calendar_event_id: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(await eventsOf("booking.created", res.body.id)).toHaveLength(1);
  });

  it.each(["customer_name", "customer_phone", "scheduled_start", "scheduled_end"])("400_missing_%s", async (field) => {
    const body: Record<string, unknown> = { customer_name: "A", customer_phone: "1", scheduled_start: START, scheduled_end: END };
    delete body[field];
    const res = await call("POST", "/appointments", { key, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", `missing required field '${field}'`));
  });

  it("400_end_not_after_start", async () => {
    const res = await book({ scheduled_end: START });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'scheduled_end': must be after scheduled_start"));
  });

  it("400_status_is_not_settable_on_create", async () => {
    const res = await book({ status: "completed" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "unknown field 'status'"));
  });

  it.each([
    ["scheduled_start", { scheduled_start: "tomorrow" }],
    ["customer_email", { customer_email: "not-an-email" }],
    ["offering_id", { offering_id: "123" }],
  ])("400_invalid_%s", async (field, body) => {
    const res = await book(body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(new RegExp(`^invalid field '${field}'`));
  });
});

describe("PATCH /appointments/{id}", () => {
  it("reschedule_emits_booking_rescheduled_with_previous_times", async () => {
    const a = (await book()).body;
    const res = await patch(a.id, { scheduled_start: "2026-12-02T10:00:00Z", scheduled_end: "2026-12-02T11:30:00Z" });
    expect(res.status).toBe(200);
    expect(res.body.scheduled_start).toBe("2026-12-02T10:00:00.000Z");
    const [event] = await eventsOf("booking.rescheduled", a.id);
    expect((event.data as any).previous_attributes).toEqual({ scheduled_start: START, scheduled_end: END });
    expect(await eventsOf("booking.cancelled", a.id)).toHaveLength(0);
  });

  it("400_reschedule_that_puts_end_before_start", async () => {
    const a = (await book()).body;
    const res = await patch(a.id, { scheduled_start: "2026-12-01T12:00:00Z" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'scheduled_end': must be after scheduled_start"));
  });

  it.each([
    ["cancelled", "booking.cancelled"],
    ["completed", "booking.completed"],
  ])("status_%s_emits_%s_and_is_terminal", async (status, type) => {
    const a = (await book()).body;
    const res = await patch(a.id, { status });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(status);
    expect(await eventsOf(type, a.id)).toHaveLength(1);
    const again = await patch(a.id, { status: "confirmed" });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorOf("conflict", `appointment is ${status}; a ${status} appointment cannot be changed`));
    const reschedule = await patch(a.id, { scheduled_start: "2026-12-01T09:00:00Z" });
    expect(reschedule.status).toBe(409);
    // Repeating the terminal state changes nothing: 200, and no second event.
    const same = await patch(a.id, { status });
    expect(same.status).toBe(200);
    expect(await eventsOf(type, a.id)).toHaveLength(1);
  });

  it("400_unknown_status_value", async () => {
    const a = (await book()).body;
    const res = await patch(a.id, { status: "no_show" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^invalid field 'status'/);
  });
});

describe("GET /appointments", () => {
  it("list_item_is_identical_to_the_create_and_patch_answers", async () => {
    const { key: own } = await tenantWithKey();
    const offering = await call("POST", "/offerings", { key: own, body: { title: "Viewing", price: 0, price_currency: "USD" } });
    const a = await book({ customer_email: "l@example.com", offering_id: offering.body.id, location_text: "Marina" }, own);
    const b = await book({ scheduled_start: "2026-12-02T10:00:00.123Z", scheduled_end: "2026-12-02T10:30:00.999Z" }, own);
    const moved = await patch(b.body.id, { status: "cancelled" }, own);
    expect([a.status, b.status, moved.status]).toEqual([201, 201, 200]);
    const list = await call("GET", "/appointments", { key: own });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body.data)).toBe(JSON.stringify([moved.body, a.body]));
  });

  it("orders_by_scheduled_start_desc_then_id_desc_across_pages_with_ties", async () => {
    const { key: k, tenantId: t } = await tenantWithKey();
    const db = scopeToTenant((await openDatabase()).prisma, t);
    await db.appointment.createMany({
      data: Array.from({ length: 25 }, (_, i) => ({
        customerName: `c${i}`,
        customerPhone: "1",
        scheduledStart: new Date(Date.UTC(2026, 5, 1, i % 3)),
        scheduledEnd: new Date(Date.UTC(2026, 5, 1, 5)),
      })) as never,
    });
    const expected = (await db.appointment.findMany({ select: { id: true, scheduledStart: true } }))
      .sort((a, b) => b.scheduledStart.getTime() - a.scheduledStart.getTime() || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call("GET", `/appointments?limit=10${cursor ? `&cursor=${cursor}` : ""}`, { key: k });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((a: any) => a.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);
  });

  // An unknown cursor and another tenant's row as a cursor: tests/api/every_operation_checks_key_scope_and_tenant.test.ts.
  it("400_malformed_cursor_and_200_empty_after_the_last_row", async () => {
    const { key: k } = await tenantWithKey();
    const only = (await book({}, k)).body;
    const after = await call("GET", `/appointments?cursor=${only.id}`, { key: k });
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ data: [], next_cursor: null, has_more: false });
    const res = await call("GET", "/appointments?cursor=nope", { key: k });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
  });
});
