// Transactional outbox: the event row and one delivery row per matching subscription are written
// with the caller's transaction client, so they commit or roll back with the change itself.
import type { Prisma } from "../db/generated/client";
import type { TenantTx } from "../db/tenant-scope";

export type EventData = { object: unknown; previous_attributes?: Record<string, unknown>; [extra: string]: unknown };

export async function emitEvent(tx: TenantTx, type: string, data: EventData): Promise<{ eventId: string; deliveries: number }> {
  const event = await tx.event.create({ data: { type, data: data as Prisma.InputJsonValue } as never, select: { id: true } });
  const subscriptions = await tx.webhookSubscription.findMany({
    where: { enabled: true, events: { has: type } },
    select: { id: true },
  });
  if (subscriptions.length) {
    await tx.webhookDelivery.createMany({
      data: subscriptions.map((s) => ({ subscriptionId: s.id, eventId: event.id })) as never,
    });
  }
  return { eventId: event.id, deliveries: subscriptions.length };
}
