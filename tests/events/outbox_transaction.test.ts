// Transactional outbox: the event and its deliveries commit or roll back with the change.
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";
import { EVENT_TYPES, EVENTS_MARKDOWN } from "../../server/events/catalog";
import { call, tenantWithKey } from "../helpers/api";
import { dashboardCaller } from "../helpers/webhooks";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
// Opening (and migrating) the database is setup, not part of a test's time budget.
beforeAll(async () => {
  await openDatabase();
});

describe("transactional outbox", () => {
  it("catalogs the 20 event names and documents each", () => {
    expect(EVENT_TYPES).toHaveLength(20);
    for (const name of ["lead.qualified", "booking.rescheduled", "call.missed", "outbound.failed", "sla.breached", "csat.received", "customer.erased"]) {
      expect(EVENT_TYPES).toContain(name);
    }
    for (const name of EVENT_TYPES) expect(EVENTS_MARKDOWN).toContain(`\`${name}\``);
  });

  it("a committed change has its event and one delivery per matching subscription; a rolled-back one has neither", async () => {
    const { tenantId, key } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/a", events: ["offering.created"], enabled: false });
    await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/b", events: ["offering.created", "offering.updated"] });
    await owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/c", events: ["offering.updated"] });
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);

    const created = await call("POST", "/offerings", { key, body: { title: "A", price: 1, price_currency: "USD" } });
    expect(created.status).toBe(201);
    const events = await db.event.findMany({});
    expect(events.map((e) => e.type)).toEqual(["offering.created"]);
    expect(events[0].data).toEqual({ object: created.body });
    expect(await db.webhookDelivery.count({ where: { eventId: events[0].id } })).toBe(1); // enabled + matching only

    await expect(
      db.$transaction(async (tx) => {
        const row = await tx.offering.create({ data: { title: "B", price: "2", priceCurrency: "USD" } as never });
        await emitEvent(tx, "offering.created", { object: { ...created.body, id: row.id } });
        throw new Error("abort the change");
      }),
    ).rejects.toThrow("abort the change");
    expect(await db.event.count({})).toBe(1);
    expect(await db.webhookDelivery.count({})).toBe(1);
    expect(await db.offering.count({})).toBe(1);
  });

  it("refuses a payload that does not match the catalog, rolling the change back", async () => {
    const { tenantId } = await tenantWithKey();
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    await expect(
      db.$transaction(async (tx) => {
        await emitEvent(tx, "offering.created", { object: { id: "nope" } } as never);
      }),
    ).rejects.toThrow(/offering.created payload does not match the catalog/);
    expect(await db.event.count({})).toBe(0);
  });
});
