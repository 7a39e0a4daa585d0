// Transactional outbox: the event row and one delivery row per matching subscription are written
// with the caller's transaction client, so they commit or roll back with the change itself.
// Each domain declares the events it emits (`<domain>.events.ts`, with `eventEmitter`), so the
// payload is checked against its schema where it is emitted: a mismatch is a bug, and it rolls the
// change back. server/events/catalog.ts gathers the declarations for the documentation.
import type { z } from "zod";
import type { Prisma } from "../db/generated/client";
import type { TenantTx } from "../db/tenant-scope";
import { databaseKind } from "../db/client";
import { OUTBOX_CHANNEL, signalOutboxWrite } from "./outbox-signal";
import { TEST_EVENT_TYPE, testEventPayload } from "./event-payloads";

export type EventData = { object: unknown; previous_attributes?: Record<string, unknown>; [extra: string]: unknown };

type Payloads = Record<string, z.ZodType>;

/**
 * The `emitEvent` of a domain: `emitEvent(tx, type, data)` for the events its `<domain>.events.ts`
 * declares only (`data` typed by, and checked against, the event's schema).
 */
export function eventEmitter<P extends Payloads>(payloads: P) {
  return async function emitEvent<T extends keyof P & string>(tx: TenantTx, type: T, data: z.input<P[T]>): Promise<{ eventId: string; deliveries: number }> {
    const checked = payloads[type].safeParse(data);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new Error(`emitEvent: ${type} payload does not match the catalog at '${issue.path.join(".")}': ${issue.message}`);
    }
    return writeEvent(tx, type, data as EventData);
  };
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
