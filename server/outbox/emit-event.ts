// Transactional outbox: the event row and one delivery row per matching subscription are written
// with the caller's transaction client, so they commit or roll back with the change itself.
// Each domain declares the events it emits (`<domain>.events.ts`, with `eventEmitter`), so the
// payload is checked against its schema where it is emitted: a mismatch is a bug, and it rolls the
// change back. server/events/catalog.ts gathers the declarations for the documentation.
import type { z } from "zod";
import { Prisma } from "../db/generated/client";
import type { TenantTx } from "../db/tenant-scope";
import { databaseKind } from "../db/location";
import { modelColumns, TABLE } from "../db/columns";
import { OUTBOX_CHANNEL, signalOutboxWrite } from "./outbox-signal";
import { TEST_EVENT_TYPE, testEventPayload } from "./event-payloads";
import { currentRequestId } from "../lib/log";
import { traceParentNow } from "../observability/tracing";
import { queryOn, executeOn } from "../db/database";
import { statement } from "../lib/sql";

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

const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);

/**
 * The outbox's write as two CTEs of one statement (each argument an SQL expression): `event`, the
 * event row (once for each row of the CTE `source` when given: none, nothing is written), and
 * `deliveries`, one pending delivery per subscription that gets the event: every enabled (or
 * auto-disabled) subscription of the tenant whose `events` holds its type, or, given `only`, that one
 * subscription (the dashboard's test event). writeEvent and bookAppointment's one statement both
 * write through it, so which subscriptions get a delivery is said once. The statement then says
 * `wakeDeliveryWorkersSql` when `deliveries` has rows (or the caller calls wakeDeliveryWorkers).
 */
export function eventFanOutSql(p: { tenant: string; type: string; data: string; origin: EventOriginSql; source?: string; only?: string }): string {
  // A subscription the platform disabled for failing still queues (held until re-enabled, then sent from where it stopped).
  const recipients = p.only
    ? `s.${SUBSCRIPTION.id} = ${p.only}`
    : `(s.${SUBSCRIPTION.enabled} OR s.${SUBSCRIPTION.disabledReason} IS NOT NULL) AND ${p.type} = ANY (s.${SUBSCRIPTION.events})`;
  // created_at is the insert's time, as Prisma's @default(now()) gives it (not the transaction's start).
  return `event AS (
  INSERT INTO ${TABLE.Event} (${EVENT.id}, ${EVENT.tenantId}, ${EVENT.type}, ${EVENT.data}, ${EVENT.createdAt}, ${EVENT.requestId}, ${EVENT.traceParent})
  SELECT gen_random_uuid(), ${p.tenant}, ${p.type}, ${p.data}, clock_timestamp(), ${p.origin.requestId}, ${p.origin.traceParent}${p.source ? ` FROM ${p.source}` : ""}
  RETURNING ${EVENT.id}
), deliveries AS (
  INSERT INTO ${TABLE.WebhookDelivery} (${DELIVERY.id}, ${DELIVERY.tenantId}, ${DELIVERY.subscriptionId}, ${DELIVERY.eventId})
  SELECT gen_random_uuid(), ${p.tenant}, s.${SUBSCRIPTION.id}, event.${EVENT.id} FROM event
  JOIN ${TABLE.WebhookSubscription} s ON s.${SUBSCRIPTION.tenantId} = ${p.tenant} AND ${recipients}
  RETURNING ${DELIVERY.id}
)`;
}

/**
 * Where an event came from, as two SQL expressions (text parameters): the id of the request that
 * caused it and, when tracing is on, that request's `traceparent`, so its delivery attempts join the
 * request's trace (server/webhooks/delivery-attempt.ts). `eventOrigin()` gives their values.
 */
export type EventOriginSql = { requestId: string; traceParent: string };

/** The values of an event's origin, read from the request running now (nulls outside any request). */
export const eventOrigin = (): [string | null, string | null] => [currentRequestId(), traceParentNow()];

/** The statement's wake-up of the delivery workers: NOTIFY at commit when `when` holds (`notify`: PostgreSQL only). */
export const wakeDeliveryWorkersSql = (when: string, notify: string) => `CASE WHEN ${notify} AND ${when} THEN pg_notify('${OUTBOX_CHANNEL}', '') END`;

const writeEventSql = (only: boolean) =>
  `WITH ${eventFanOutSql({ tenant: "$1::uuid", type: "$2::text", data: "$3::text::jsonb", origin: { requestId: "$4::text", traceParent: "$5::text" }, only: only ? "$6::uuid" : undefined })}
SELECT (SELECT ${EVENT.id} FROM event) AS "eventId", (SELECT count(*)::int FROM deliveries) AS deliveries`;
const WRITE_EVENT_SQL = writeEventSql(false);
const WRITE_TEST_EVENT_SQL = writeEventSql(true);

async function writeEvent(tx: TenantTx, type: string, data: EventData, onlySubscriptionId?: string) {
  const values = [tx.tenantId, type, JSON.stringify(data), ...eventOrigin(), ...(onlySubscriptionId ? [onlySubscriptionId] : [])];
  const [written] = await queryOn(tx, statement<{ eventId: string; deliveries: number }>(onlySubscriptionId ? WRITE_TEST_EVENT_SQL : WRITE_EVENT_SQL), values);
  if (written.deliveries > 0) await wakeDeliveryWorkers(tx);
  return written;
}

/** Tells the delivery workers that deliveries became due, once the caller's transaction commits. */
export async function wakeDeliveryWorkers(tx: Pick<TenantTx, "$executeRawUnsafe">): Promise<void> {
  // NOTIFY is queued with the transaction and delivered at commit only (never on rollback).
  if (databaseKind() === "postgres") await executeOn(tx, statement(`NOTIFY ${OUTBOX_CHANNEL}`), []);
  signalOutboxWrite();
}
