// Erasing one customer, on both databases: a customer seeded across every table (intake, a call, the
// assistant's tools, the API, webhooks delivered to a real consumer, a notification) is erased by
// their phone number, then every text and JSON column of every table is scanned for their name,
// phone (both forms), email and identifier and nothing is found outside the other tenant, whose
// identical customer is untouched. One `customer.erased` event with ids only; an audit entry without
// the values; idempotent; bad input and another tenant's conversation answered like the API says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { ERASED } from "../../server/erasure/erasure.types";
import { call, dashboardCaller, newKey, tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { eventsOf } from "../helpers/conversations";
import { type Customer, findAnywhere, seedCustomer, spacedPhone, subscribeToEverything, uniqueCustomer } from "./seed-customer";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
process.env.WEBHOOK_RETRY_DELAYS_MS = "0,100,100,100,100,100";

let consumer: Consumer;
beforeAll(async () => {
  consumer = await startConsumer(200);
  await openDatabase();
  await startEmbeddedWorker({ pollIntervalMs: 100 });
});
afterAll(async () => {
  await stopEmbeddedWorker();
  await consumer.close();
});

const needlesOf = (c: Customer) => [c.name, c.phone, spacedPhone(c.phone), c.phone.slice(1), c.email];

async function allDelivered(tenantId: string) {
  await eventually(async () => {
    const pending = await (await openDatabase()).prisma.webhookDelivery.count({ where: { tenantId, status: { not: "delivered" } } });
    const total = await (await openDatabase()).prisma.webhookDelivery.count({ where: { tenantId } });
    return total > 0 && pending === 0;
  }, 15_000);
}

describe("erasing one customer", () => {
  it("nothing_of_the_customer_is_left_in_any_text_or_json_column_and_the_other_tenant_s_identical_customer_is_intact", async () => {
    const a = await tenantWithKey();
    const b = await tenantWithKey();
    const customer = uniqueCustomer();
    await subscribeToEverything(a.tenantId, consumer.url("/a"));
    await subscribeToEverything(b.tenantId, consumer.url("/b"));
    const seededA = await seedCustomer(a.tenantId, a.key, customer);
    const seededB = await seedCustomer(b.tenantId, b.key, customer);
    await allDelivered(a.tenantId);
    await allDelivered(b.tenantId);
    // The seed reached every place the scan looks: attempts hold request bodies with the customer.
    const before = await findAnywhere(needlesOf(customer), [b.tenantId]);
    for (const place of ["conversations.customer_identifier", "messages.body", "calls.recording_url", "leads.customer_email", "appointments.customer_name"]) {
      expect(before.some((hit) => hit.startsWith(`${place} `))).toBe(true);
    }
    for (const place of ["events.data", "webhook_attempts.request_body", "tool_calls.result", "idempotent_responses.body", "notifications.body"]) {
      expect(before.some((hit) => hit.startsWith(`${place} `))).toBe(true);
    }
    const eventsBefore = await (await openDatabase()).prisma.event.count({ where: { tenantId: a.tenantId } });

    const privacy = await newKey(a.tenantId, ["privacy:write"]);
    const erased = await call("POST", "/privacy/erasures", { key: privacy.key, body: { customer_identifier: spacedPhone(customer.phone) } });

    expect(erased.status).toBe(200);
    expect(erased.body.status).toBe("erased");
    expect(new Set(erased.body.conversation_ids)).toEqual(new Set(seededA.conversationIds));
    expect(erased.body.lead_ids).toEqual([seededA.leadId]);
    expect(erased.body.appointment_ids).toEqual([seededA.appointmentId]);
    expect(erased.body.call_ids).toEqual([seededA.callId]);
    expect(erased.body.message_ids).toHaveLength(4);
    expect(erased.body.csat_response_ids).toHaveLength(1);
    expect(await findAnywhere(needlesOf(customer), [b.tenantId])).toEqual([]);

    // Ids, statuses and counts stay.
    const db = (await openDatabase()).prisma;
    const conversations = await db.conversation.findMany({ where: { tenantId: a.tenantId }, orderBy: { id: "asc" } });
    expect(conversations.map((c) => c.customerIdentifier).sort()).toEqual(seededA.conversationIds.map((id) => `erased:${id}`).sort());
    expect(conversations.reduce((n, c) => n + c.messageCount, 0)).toBe(4);
    expect((await db.message.findMany({ where: { tenantId: a.tenantId } })).map((m) => m.body)).toEqual(Array(4).fill(ERASED));
    expect(await db.lead.findFirstOrThrow({ where: { id: seededA.leadId } })).toMatchObject({ status: "qualified", customerName: null, customerEmail: null });
    expect(await db.call.findFirstOrThrow({ where: { id: seededA.callId } })).toMatchObject({ status: "completed", durationSeconds: 59, recordingUrl: null });

    // One event, ids only, delivered like any other.
    const erasedEvents = await eventsOf(a.tenantId, "customer.erased");
    expect(erasedEvents).toHaveLength(1);
    expect(erasedEvents[0].data).toEqual({
      object: {
        conversation_ids: erased.body.conversation_ids,
        message_ids: erased.body.message_ids,
        call_ids: erased.body.call_ids,
        lead_ids: erased.body.lead_ids,
        appointment_ids: erased.body.appointment_ids,
        csat_response_ids: erased.body.csat_response_ids,
      },
    });
    expect(erased.body.event_id).toMatch(/^evt_/);
    await eventually(async () => consumer.received.some((r) => r.path === "/a" && r.body?.event === "customer.erased"), 10_000);
    const audit = await db.auditLog.findMany({ where: { tenantId: a.tenantId, action: "customer.erased" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: "api_key", actorId: privacy.id, targetType: "customer" });
    expect(audit[0].details).toMatchObject({ by: "customer_identifier", event_id: erased.body.event_id, conversations: 4, messages: 4, leads: 1 });

    // The other tenant's identical customer: untouched.
    const theirs = await db.conversation.findMany({ where: { tenantId: b.tenantId } });
    expect(theirs.map((c) => c.customerIdentifier).sort()).toEqual([customer.email, customer.phone, customer.phone, customer.phone].sort());
    expect(new Set(theirs.map((c) => c.id))).toEqual(new Set(seededB.conversationIds));
    expect((await db.message.findMany({ where: { tenantId: b.tenantId } })).filter((m) => m.body === ERASED)).toEqual([]);
    const theirHits = await findAnywhere(needlesOf(customer), [a.tenantId]);
    expect(theirHits.length).toBeGreaterThan(8);

    // Idempotent: again by identifier finds nothing; again by conversation finds it erased; no second event.
    const again = await call("POST", "/privacy/erasures", { key: privacy.key, body: { customer_identifier: customer.email } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: "nothing_found", event_id: null, conversation_ids: [] });
    const byConversation = await call("POST", "/privacy/erasures", { key: privacy.key, body: { conversation_id: seededA.conversationIds[0] } });
    expect(byConversation.status).toBe(200);
    expect(byConversation.body).toMatchObject({ status: "already_erased", event_id: null, conversation_ids: [seededA.conversationIds[0]] });
    expect(await eventsOf(a.tenantId, "customer.erased")).toHaveLength(1);
    // The event is the only one the erasure added.
    expect(await db.event.count({ where: { tenantId: a.tenantId } })).toBe(eventsBefore + 1);
  }, 120_000);

  it("erasing_by_conversation_id_erases_that_customer_only", async () => {
    const a = await tenantWithKey();
    const one = uniqueCustomer();
    const other = uniqueCustomer();
    const seeded = await seedCustomer(a.tenantId, a.key, one);
    await seedCustomer(a.tenantId, a.key, other);
    const answer = await call("POST", "/privacy/erasures", { key: a.key, body: { conversation_id: seeded.conversationIds[2] } });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("erased");
    // The voice conversation leads to the phone, the lead's email to the email conversation: the same customer.
    expect(new Set(answer.body.conversation_ids)).toEqual(new Set(seeded.conversationIds));
    const hits = await findAnywhere(needlesOf(one));
    expect(hits).toEqual([]);
    expect((await findAnywhere(needlesOf(other))).length).toBeGreaterThan(5);
  }, 60_000);

  it("bad_input_is_a_400_naming_the_field", async () => {
    const { key } = await tenantWithKey();
    const cases: [unknown, string][] = [
      [{}, "customer_identifier"],
      [{ customer_identifier: "+971501234567", conversation_id: "5d3b2c1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d" }, "conversation_id"],
      [{ customer_identifier: "not a phone" }, "customer_identifier"],
      [{ customer_identifier: "   " }, "customer_identifier"],
      [{ customer_identifier: "x".repeat(321) }, "customer_identifier"],
      [{ conversation_id: "nope" }, "conversation_id"],
      [{ customer_identifier: "+971501234567", extra: 1 }, "extra"],
    ];
    for (const [body, field] of cases) {
      const answer = await call("POST", "/privacy/erasures", { key, body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("bad_request");
      expect(answer.body.error.message).toContain(field);
    }
  });

  it("another_tenant_s_conversation_is_the_404_of_a_missing_one", async () => {
    const a = await tenantWithKey();
    const b = await tenantWithKey();
    const seeded = await seedCustomer(b.tenantId, b.key, uniqueCustomer());
    const theirs = await call("POST", "/privacy/erasures", { key: a.key, body: { conversation_id: seeded.conversationIds[0] } });
    const missing = await call("POST", "/privacy/erasures", { key: a.key, body: { conversation_id: "5d3b2c1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d" } });
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
    expect(
      await (await openDatabase()).prisma.conversation.count({ where: { id: seeded.conversationIds[0], customerIdentifier: { startsWith: "erased:" } } }),
    ).toBe(0);
  }, 60_000);

  it("403_without_privacy_write_and_only_owners_may_erase_or_grant_it_in_the_dashboard", async () => {
    const a = await tenantWithKey(["read", "leads:write", "conversations:write"]);
    const refused = await call("POST", "/privacy/erasures", { key: a.key, body: { customer_identifier: "+971501234567" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("privacy:write");

    const input = { customer_identifier: "+971501234567" };
    await expect(dashboardCaller(a.tenantId, "admin").privacy.erase(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(dashboardCaller(a.tenantId, "member").privacy.erase(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await dashboardCaller(a.tenantId, "owner").privacy.erase(input)).toMatchObject({ status: "nothing_found" });

    await expect(dashboardCaller(a.tenantId, "admin").dashboard.apiKeys.issue({ name: "dpo", scopes: ["privacy:write"] })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const issued = await dashboardCaller(a.tenantId, "owner").dashboard.apiKeys.issue({ name: "dpo", scopes: ["privacy:write"] });
    expect(issued.key.scopes).toEqual(["privacy:write"]);
  });
});
