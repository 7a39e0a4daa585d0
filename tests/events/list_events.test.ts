// GET /api/v1/events: the tenant's events as the envelopes webhooks carry, newest first, keyset
// paginated by event id, filtered by type and created_at range; another tenant's events never show.
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { toEnvelope } from "../../server/events/catalog";
import { call, tenantWithKey } from "../helpers/api";

const offering = { title: "Studio", price: 900, price_currency: "USD" };

beforeAll(async () => {
  await openDatabase();
});

/** A tenant with three events: offering.created, offering.updated, booking.created (in that order). */
async function tenantWithThreeEvents() {
  const t = await tenantWithKey();
  const created = await call("POST", "/offerings", { key: t.key, body: offering });
  const updated = await call("PATCH", `/offerings/${created.body.id}`, { key: t.key, body: { price: "950" } });
  const booked = await call("POST", "/appointments", {
    key: t.key,
    body: { customer_name: "Rana", customer_phone: "+971501112233", scheduled_start: "2026-12-01T09:00:00.000Z", scheduled_end: "2026-12-01T09:30:00.000Z" },
  });
  expect([created.status, updated.status, booked.status]).toEqual([201, 200, 201]);
  return { ...t, offering: updated.body, appointment: booked.body };
}

describe("GET /api/v1/events", () => {
  it("200_lists_the_tenants_events_newest_first_as_the_envelopes_webhooks_carry", async () => {
    const t = await tenantWithThreeEvents();
    const res = await call("GET", "/events", { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((e: any) => e.event)).toEqual(["booking.created", "offering.updated", "offering.created"]);
    expect(res.body.data[0]).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      event: "booking.created",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      tenant_id: t.tenantId,
      data: { object: t.appointment },
    });
    expect(res.body.data[1].data).toEqual({ object: t.offering, previous_attributes: { price: "900" } });
    // Byte for byte what a delivery of the same event sends.
    const db = (await openDatabase()).prisma;
    const rows = await db.event.findMany({ where: { tenantId: t.tenantId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    expect(res.body.data).toEqual(JSON.parse(JSON.stringify(rows.map(toEnvelope))));
  });

  it("paginates_with_event_id_cursors_and_filters_by_type_and_created_range", async () => {
    const t = await tenantWithThreeEvents();
    const first = await call("GET", "/events?limit=2", { key: t.key });
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: any) => e.event)).toEqual(["booking.created", "offering.updated"]);
    expect(first.body.has_more).toBe(true);
    expect(first.body.next_cursor).toBe(first.body.data[1].id);
    const second = await call("GET", `/events?limit=2&cursor=${first.body.next_cursor}`, { key: t.key });
    expect(second.body.data.map((e: any) => e.event)).toEqual(["offering.created"]);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });

    const byType = await call("GET", "/events?type=offering.updated", { key: t.key });
    expect(byType.body.data.map((e: any) => e.id)).toEqual([first.body.data[1].id]);

    const newest = first.body.data[0].created_at;
    const before = await call("GET", `/events?created_lt=${encodeURIComponent(newest)}`, { key: t.key });
    expect(before.body.data.every((e: any) => e.created_at < newest)).toBe(true);
    expect(before.body.data.map((e: any) => e.event)).not.toContain("booking.created");
    const from = await call("GET", `/events?created_gte=${encodeURIComponent(newest)}`, { key: t.key });
    expect(from.body.data.map((e: any) => e.event)).toContain("booking.created");
    expect(from.body.data.every((e: any) => e.created_at >= newest)).toBe(true);
    const future = await call("GET", "/events?created_gte=2999-01-01T00:00:00.000Z", { key: t.key });
    expect(future.body).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  // Another tenant's event id as a cursor: tests/api/every_operation_checks_key_scope_and_tenant.test.ts.
  it("another_tenants_events_never_appear", async () => {
    await tenantWithThreeEvents();
    const b = await tenantWithKey();
    const listed = await call("GET", "/events", { key: b.key });
    expect(listed.body).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  it("400_names_the_field_of_a_bad_filter_or_cursor", async () => {
    const t = await tenantWithKey();
    for (const [query, field] of [
      ["type=booking.exploded", "type"],
      ["created_gte=yesterday", "created_gte"],
      ["created_lt=2026-13-01T00:00:00Z", "created_lt"],
      ["cursor=123", "cursor"],
      ["limit=0", "limit"],
    ]) {
      const res = await call("GET", `/events?${query}`, { key: t.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
      expect(res.body.error.message, query).toContain(`'${field}'`);
    }
  });
});
