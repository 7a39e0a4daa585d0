// Rows of every kind retention covers, at a chosen age, written straight to the database (the purge
// reads only tenant_id and created_at): messages, calls with a recording, events with a delivery and
// its attempt, audit-log entries and notifications.
import { randomUUID } from "node:crypto";
import { getDb } from "../../server/db/client";
import { makeConversation } from "../helpers/conversations";

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

/** A webhook subscription row (never contacted: no worker runs where it is used). */
export async function subscriptionRow(tenantId: string) {
  const db = await getDb();
  return db.webhookSubscription.create({
    data: { tenantId, targetUrl: "https://example.com/hook", secretEncrypted: "x", secretPrefix: "whsec_000000", events: ["offering.created"] },
  });
}

/**
 * For each age in `ages` (days): one conversation's worth of rows created that long ago. Events get
 * a delivered delivery with one attempt, except with `pending`, where the delivery is still pending.
 */
export async function seedAged(tenantId: string, ages: number[], opts: { subscriptionId: string; pending?: boolean; messagesPerAge?: number }) {
  const db = await getDb();
  const conversation = await makeConversation(tenantId);
  for (const age of ages) {
    const at = daysAgo(age);
    await db.message.createMany({
      data: Array.from({ length: opts.messagesPerAge ?? 2 }, (_, i) => ({
        tenantId,
        conversationId: conversation.id,
        direction: i % 2 ? "outbound" : "inbound",
        author: i % 2 ? "assistant" : "customer",
        body: `message ${age}d #${i}`,
        status: i % 2 ? "sent" : "received",
        createdAt: at,
      })),
    });
    await db.call.create({
      data: {
        tenantId,
        conversationId: conversation.id,
        provider: "vapi",
        providerCallId: randomUUID(),
        direction: "inbound",
        status: "completed",
        startedAt: at,
        recordingUrl: `https://recordings.example/${age}.mp3`,
        summary: `call ${age}d`,
        createdAt: at,
      },
    });
    const event = await db.event.create({ data: { tenantId, type: "offering.created", data: { object: { age } }, createdAt: at } });
    const delivery = await db.webhookDelivery.create({
      data: {
        tenantId,
        subscriptionId: opts.subscriptionId,
        eventId: event.id,
        status: opts.pending ? "pending" : "delivered",
        attemptCount: opts.pending ? 0 : 1,
        nextAttemptAt: opts.pending ? at : null,
        responseBody: "ok",
        createdAt: at,
      },
    });
    if (!opts.pending) {
      await db.webhookAttempt.create({
        data: {
          tenantId,
          deliveryId: delivery.id,
          cycle: 1,
          attemptNumber: 1,
          outcome: "delivered",
          statusCode: 200,
          durationMs: 5,
          requestBody: "{}",
          createdAt: at,
        },
      });
    }
    await db.auditLog.create({ data: { tenantId, actorType: "operator", action: "test.entry", targetType: "test", details: { age }, createdAt: at } });
    await db.notification.create({ data: { tenantId, kind: "test", title: `n ${age}`, body: "b", createdAt: at } });
  }
  return conversation;
}

/** Counts of the tenant's rows per kind, and its calls that still have a recording. */
export async function countsOf(tenantId: string) {
  const db = await getDb();
  const where = { tenantId };
  return {
    messages: await db.message.count({ where }),
    recordings: await db.call.count({ where: { tenantId, recordingUrl: { not: null } } }),
    calls: await db.call.count({ where }),
    events: await db.event.count({ where }),
    deliveries: await db.webhookDelivery.count({ where }),
    attempts: await db.webhookAttempt.count({ where }),
    audit: await db.auditLog.count({ where }),
    notifications: await db.notification.count({ where }),
  };
}
