// Transactional outbox: the event row and one delivery row per matching subscription are written
// with the caller's transaction client, so they commit or roll back with the change itself.
// The payload is checked against the catalog: a mismatch is a bug, and it rolls the change back.
import type { Prisma } from "../db/generated/client";
import type { TenantTx } from "../db/tenant-scope";
import { databaseKind } from "../db/client";
import { EVENT_PAYLOADS, TEST_EVENT_TYPE, testEventPayload, type EventPayload, type EventType } from "./catalog";
import { OUTBOX_CHANNEL, signalOutboxWrite } from "./outbox-signal";

export type EventData = { object: unknown; previous_attributes?: Record<string, unknown>; [extra: string]: unknown };

export async function emitEvent<T extends EventType>(tx: TenantTx, type: T, data: EventPayload<T>): Promise<{ eventId: string; deliveries: number }> {
  const schema = EVENT_PAYLOADS[type];
  if (!schema) throw new Error(`emitEvent: '${type}' is not in the event catalog`);
  const checked = schema.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new Error(`emitEvent: ${type} payload does not match the catalog at '${issue.path.join(".")}': ${issue.message}`);
  }
  return writeEvent(tx, type, data as EventData);
}

/** The dashboard's test event: stored like any event, delivered to the one subscription only. */
export async function emitTestEvent(tx: TenantTx, subscriptionId: string): Promise<{ eventId: string; deliveries: number }> {
  const data = testEventPayload.parse({ object: { subscription_id: subscriptionId, message: "This is a test event sent from the dashboard." } });
  return writeEvent(tx, TEST_EVENT_TYPE, data, subscriptionId);
}

async function writeEvent(tx: TenantTx, type: string, data: EventData, onlySubscriptionId?: string) {
  const event = await tx.event.create({ data: { tenantId: tx.tenantId, type, data: data as Prisma.InputJsonValue }, select: { id: true } });
  const subscriptions = await tx.webhookSubscription.findMany({
    where: onlySubscriptionId ? { id: onlySubscriptionId } : { enabled: true, events: { has: type } },
    select: { id: true },
  });
  if (subscriptions.length) {
    await tx.webhookDelivery.createMany({
      data: subscriptions.map((s) => ({ tenantId: tx.tenantId, subscriptionId: s.id, eventId: event.id })),
    });
    await wakeDeliveryWorkers(tx);
  }
  return { eventId: event.id, deliveries: subscriptions.length };
}

/** Tells the delivery workers that deliveries became due, once the caller's transaction commits. */
export async function wakeDeliveryWorkers(tx: Pick<TenantTx, "$executeRawUnsafe">): Promise<void> {
  // NOTIFY is queued with the transaction and delivered at commit only (never on rollback).
  if (databaseKind() === "postgres") await tx.$executeRawUnsafe(`NOTIFY ${OUTBOX_CHANNEL}`);
  signalOutboxWrite();
}
