// Webhook subscriptions, deliveries and notifications of one tenant (the dashboard's procedures
// and the operator CLI). Every read and write goes through the tenant-scoped client; changes
// write their audit entry in the same transaction.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { conflict, notFound } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { eventWireId } from "../events/catalog";
import { emitTestEvent, wakeDeliveryWorkers } from "../outbox/emit-event";
import { generateWebhookSecret, secretPrefix } from "./signing";
import { assertAllowedTargetUrl } from "../lib/target-url";
import { MAX_DELIVERIES_PER_SECOND, UPDATABLE_SUBSCRIPTION_FIELDS } from "./webhooks.types";
import {
  type CreateSubscriptionInput,
  type Delivery,
  deliveryResource,
  type DeliveryRow,
  type DeliveryState,
  deliveryState,
  notificationResource,
  type Subscription,
  subscriptionResource,
  type UpdateSubscriptionInput,
} from "./webhooks.types";
import { setting } from "../lib/settings";

const subscriptionToWire = subscriptionResource.toWire;

/** The `where` of deliveries in one dashboard state. */
function stateFilter(state: DeliveryState): Prisma.WebhookDeliveryWhereInput {
  switch (state) {
    case "pending":
      return { status: "pending", attemptCount: 0 };
    case "retrying":
      return { status: "pending", attemptCount: { gt: 0 } };
    case "failed":
      return { status: "permanent_fail" };
    case "dead_lettered":
      return { status: "dead_letter" };
    case "delivered":
      return { status: "delivered" };
  }
}

const deliveryToWire = (row: DeliveryRow): Delivery => deliveryResource.toWire(row);

const notificationToWire = (row: Prisma.NotificationGetPayload<object>) => notificationResource.toWire(row);

export async function listSubscriptions(db: TenantDb, input: { limit?: number; cursor?: string }) {
  const page = await keysetPage({
    ...input,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.webhookSubscription.findFirst({ where: { id }, select: { createdAt: true } }),
    findMany: (args) => db.webhookSubscription.findMany(args),
  });
  return toListEnvelope(page, subscriptionToWire);
}

/** Deliveries of a subscription that are still to be tried (deleting the subscription drops them). */
const countPendingDeliveries = (db: TenantDb | TenantTx, subscriptionId: string) => db.webhookDelivery.count({ where: { subscriptionId, status: "pending" } });

export async function getSubscription(db: TenantDb, id: string) {
  const row = await db.webhookSubscription.findFirst({ where: { id } });
  if (!row) throw notFound();
  return { ...subscriptionToWire(row), pending_deliveries: await countPendingDeliveries(db, id) };
}

/** Creates a subscription with a new secret; the plaintext secret is returned here only. */
export async function createSubscription(db: TenantDb, input: CreateSubscriptionInput, actor: AuditActor) {
  const url = await assertAllowedTargetUrl(input.url, "url");
  const secret = generateWebhookSecret();
  const row = await db.$transaction(async (tx) => {
    const created = await tx.webhookSubscription.create({
      data: {
        ...subscriptionResource.patchToColumns({ ...input, url }),
        tenantId: tx.tenantId,
        description: input.description ?? null,
        enabled: input.enabled ?? true,
        maxDeliveriesPerSecond: input.max_deliveries_per_second ?? MAX_DELIVERIES_PER_SECOND.default,
        secretEncrypted: encryptSecret(secret),
        secretPrefix: secretPrefix(secret),
      },
    });
    await recordAudit(tx, {
      ...actor,
      action: "webhook_subscription.created",
      targetType: "webhook_subscription",
      targetId: created.id,
      details: { url, events: input.events, enabled: created.enabled, max_deliveries_per_second: created.maxDeliveriesPerSecond },
    });
    return created;
  });
  return { ...subscriptionToWire(row), secret };
}

export async function updateSubscription(db: TenantDb, input: UpdateSubscriptionInput, actor: AuditActor): Promise<Subscription> {
  const url = input.url === undefined ? undefined : await assertAllowedTargetUrl(input.url, "url");
  return db.$transaction(async (tx) => {
    const before = await tx.webhookSubscription.findFirst({ where: { id: input.id } });
    if (!before) throw notFound();
    const data: Prisma.WebhookSubscriptionUpdateInput = subscriptionResource.patchToColumns({ ...input, url });
    // Enabling starts the endpoint afresh (breaker closed, no failure streak); any change of `enabled` ends an auto-disable.
    if (input.enabled !== undefined && input.enabled !== before.enabled) Object.assign(data, { disabledReason: null, disabledAt: null });
    if (input.enabled && !before.enabled) Object.assign(data, { consecutiveFailures: 0, breakerProbeAt: null, failingSince: null });
    const after = await tx.webhookSubscription.update({ where: { id: input.id }, data });
    const previous = subscriptionToWire(before);
    const next = subscriptionToWire(after);
    const changed = UPDATABLE_SUBSCRIPTION_FIELDS.filter((k) => JSON.stringify(previous[k]) !== JSON.stringify(next[k]));
    if (changed.length) {
      await recordAudit(tx, {
        ...actor,
        action: "webhook_subscription.changed",
        targetType: "webhook_subscription",
        targetId: input.id,
        details: { changed: Object.fromEntries(changed.map((k) => [k, { from: previous[k], to: next[k] }])) } as Prisma.InputJsonValue,
      });
      // Re-enabling releases the deliveries that waited while the subscription was disabled.
      if (changed.includes("enabled") && next.enabled) await wakeDeliveryWorkers(tx);
    }
    return next;
  });
}

/** How long a replaced secret keeps signing by default (WEBHOOK_SECRET_OVERLAP_SECONDS, 24 hours). */
const defaultSecretOverlapSeconds = () => setting("WEBHOOK_SECRET_OVERLAP_SECONDS");

/**
 * Issues a new secret. The old one keeps signing beside it for `overlapSeconds` (both signature
 * headers carry one signature per secret meanwhile), so a consumer can switch without dropping a
 * delivery. The new plaintext is returned here only.
 */
export async function rollSubscriptionSecret(db: TenantDb, id: string, actor: AuditActor, overlapSeconds = defaultSecretOverlapSeconds()) {
  const secret = generateWebhookSecret();
  const row = await db.$transaction(async (tx) => {
    const before = await tx.webhookSubscription.findFirst({ where: { id } });
    if (!before) throw notFound();
    const keepsSigning = overlapSeconds > 0;
    const after = await tx.webhookSubscription.update({
      where: { id },
      data: {
        secretEncrypted: encryptSecret(secret),
        secretPrefix: secretPrefix(secret),
        previousSecretEncrypted: keepsSigning ? before.secretEncrypted : null,
        previousSecretExpiresAt: keepsSigning ? new Date(Date.now() + overlapSeconds * 1000) : null,
      },
    });
    await recordAudit(tx, {
      ...actor,
      action: "webhook_subscription.secret_rolled",
      targetType: "webhook_subscription",
      targetId: id,
      details: { previous_secret_prefix: before.secretPrefix, secret_prefix: after.secretPrefix, overlap_seconds: overlapSeconds },
    });
    return after;
  });
  return { ...subscriptionToWire(row), secret };
}

/**
 * Why a stored create or roll answer (`Idempotency-Key`, server/idempotency/) may no longer be
 * replayed, or null while its `secret` is still the endpoint's signing secret: a replay never hands
 * out a secret that a roll has replaced (even one still signing during the overlap) or a deleted endpoint's.
 */
export async function whyAnsweredSecretIsRetired(db: TenantDb, answer: unknown): Promise<string | null> {
  const { id, secret } = answer as { id: string; secret: string };
  const row = await db.webhookSubscription.findFirst({ where: { id }, select: { secretEncrypted: true } });
  if (!row) return `webhook endpoint ${id} has since been deleted`;
  if (decryptSecret(row.secretEncrypted) === secret) return null;
  return `webhook endpoint ${id}'s signing secret has since been rolled; roll it again (POST /api/v1/webhook-endpoints/${id}/roll-secret) for a new one`;
}

/** Deletes the subscription and its deliveries (their attempts go with them); the audit entry counts the pending ones dropped. */
export async function deleteSubscription(
  db: TenantDb,
  id: string,
  actor: AuditActor,
): Promise<{ id: string; deleted: true; dropped_pending_deliveries: number }> {
  return db.$transaction(async (tx) => {
    const existing = await tx.webhookSubscription.findFirst({ where: { id } });
    if (!existing) throw notFound();
    const pending = await countPendingDeliveries(tx, id);
    await tx.webhookSubscription.delete({ where: { id } });
    await recordAudit(tx, {
      ...actor,
      action: "webhook_subscription.deleted",
      targetType: "webhook_subscription",
      targetId: id,
      details: { url: existing.targetUrl, events: existing.events, dropped_pending_deliveries: pending },
    });
    return { id, deleted: true as const, dropped_pending_deliveries: pending };
  });
}

const deliveryInclude = { event: { select: { type: true } }, attempts: true } as const;

export async function listDeliveries(
  db: TenantDb,
  input: { limit?: number; cursor?: string; subscription_id?: string; status?: Delivery["status"]; state?: DeliveryState; event_type?: string },
) {
  const filter: Prisma.WebhookDeliveryWhereInput = {};
  if (input.subscription_id) filter.subscriptionId = input.subscription_id;
  if (input.status) filter.status = input.status;
  if (input.state) filter.AND = [stateFilter(input.state)];
  if (input.event_type) filter.event = { type: input.event_type };
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.webhookDelivery.findFirst({ where: { id, ...filter }, select: { createdAt: true } }),
    findMany: (args) => db.webhookDelivery.findMany({ ...args, where: { ...args.where, ...filter }, include: deliveryInclude }),
  });
  return toListEnvelope(page, (row) => deliveryToWire(row as DeliveryRow));
}

export async function getDelivery(db: TenantDb, id: string): Promise<Delivery> {
  const row = await db.webhookDelivery.findFirst({ where: { id }, include: deliveryInclude });
  if (!row) throw notFound();
  return deliveryToWire(row as DeliveryRow);
}

/**
 * Resends a delivery in any state: a new cycle of the whole ladder (cycle + 1, attempts from 1),
 * due now. Earlier cycles' attempts stay. An attempt in flight (its lease not yet over) is a 409:
 * its outcome would otherwise be dropped unrecorded.
 */
export async function replayDelivery(db: TenantDb, id: string, actor: AuditActor): Promise<Delivery> {
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "WebhookDelivery", id))) throw notFound();
    const before = await tx.webhookDelivery.findFirst({ where: { id } });
    if (!before) throw notFound();
    if (before.status === "pending" && before.lockedUntil && before.lockedUntil > new Date()) {
      throw conflict("an attempt of this delivery is in flight; resend it once that attempt is recorded");
    }
    await tx.webhookDelivery.update({
      where: { id },
      data: { status: "pending", cycle: before.cycle + 1, attemptCount: 0, nextAttemptAt: new Date(), lockedUntil: null, inngestRunId: null },
    });
    await recordAudit(tx, {
      ...actor,
      action: "delivery.replayed",
      targetType: "webhook_delivery",
      targetId: id,
      details: {
        subscription_id: before.subscriptionId,
        event_id: eventWireId(before.eventId),
        cycle: before.cycle + 1,
        previous_state: deliveryState(before),
      },
    });
    await wakeDeliveryWorkers(tx);
    const row = await tx.webhookDelivery.findFirst({ where: { id }, include: deliveryInclude });
    return deliveryToWire(row as DeliveryRow);
  });
}

/** Sends `webhook.test` to one enabled subscription only. */
export async function sendTestEvent(db: TenantDb, subscriptionId: string): Promise<Delivery> {
  return db.$transaction(async (tx) => {
    const subscription = await tx.webhookSubscription.findFirst({ where: { id: subscriptionId }, select: { id: true, enabled: true } });
    if (!subscription) throw notFound();
    if (!subscription.enabled) throw conflict("subscription is disabled; enable it to send a test event");
    const { eventId } = await emitTestEvent(tx, subscriptionId);
    const row = await tx.webhookDelivery.findFirst({ where: { eventId, subscriptionId }, include: deliveryInclude });
    return deliveryToWire(row as DeliveryRow);
  });
}

export async function listNotifications(db: TenantDb, input: { limit?: number; cursor?: string; unread_only?: boolean }) {
  const filter = input.unread_only ? { readAt: null } : {};
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.notification.findFirst({ where: { id, ...filter }, select: { createdAt: true } }),
    findMany: (args) => db.notification.findMany({ ...args, where: { ...args.where, ...filter } }),
  });
  return toListEnvelope(page, notificationToWire);
}

export async function markNotificationRead(db: TenantDb, id: string) {
  const existing = await db.notification.findFirst({ where: { id } });
  if (!existing) throw notFound();
  const row = existing.readAt ? existing : await db.notification.update({ where: { id }, data: { readAt: new Date() } });
  return notificationToWire(row);
}
