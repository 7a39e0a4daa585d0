// The SQL that claims due deliveries: FOR UPDATE SKIP LOCKED and a lease (`locked_until`), so
// several processes on one PostgreSQL never take the same delivery; the paced claim also hands out
// each subscription's send slots (max_deliveries_per_second) across processes.
import { modelColumns } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { TARGET_COLUMNS } from "./delivery-attempt";

// Columns named through the model (server/db/columns.ts).
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const EVENT = modelColumns(Prisma.EventScalarFieldEnum);

/**
 * How far ahead a claim takes send slots (or one slot, at a rate under 1/this): a claimed delivery
 * waits in the worker for its slot, so this bounds how long a lease is held before sending.
 */
export const PACE_HORIZON_MS = 250;

/** Due, unleased, and not this worker's own (`$3`): the deliveries a claim may take. */
const dueDeliveries = (engineFilter: string) => `d.${DELIVERY.status} = 'pending' AND ${engineFilter} AND d.${DELIVERY.nextAttemptAt} <= now()
    AND (d.${DELIVERY.lockedUntil} IS NULL OR d.${DELIVERY.lockedUntil} <= now())
    AND NOT (d.${DELIVERY.id} = ANY($3::uuid[]))`;

/**
 * The paced claim ($1 capacity, $2 lease ms, $3 own in-flight ids, $4 horizon ms). Each subscription
 * with due deliveries is locked (SKIP LOCKED: one claimer at a time per subscription, in every
 * process), its due deliveries get consecutive send slots 1/rate apart from its next free slot, in
 * creation order, as far as the horizon reaches; the subscription's next free slot moves past the
 * last one taken. Every row says how long to wait for its slot (`wait_ms`); the lease runs from the slot.
 */
export function pacedClaimSql(engineFilter: string) {
  return `
WITH subs AS (
  SELECT s.${SUBSCRIPTION.id}, greatest(s.${SUBSCRIPTION.nextDeliveryAt}, now()) AS first_slot,
    make_interval(secs => 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond}) AS gap,
    now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond})) AS horizon
  FROM webhook_subscriptions s
  WHERE s.${SUBSCRIPTION.enabled}
    AND s.${SUBSCRIPTION.nextDeliveryAt} < now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond}))
    AND s.${SUBSCRIPTION.id} IN (SELECT d.${DELIVERY.subscriptionId} FROM webhook_deliveries d WHERE ${dueDeliveries(engineFilter)})
  ORDER BY s.${SUBSCRIPTION.nextDeliveryAt}
  LIMIT $1::int
  FOR UPDATE OF s SKIP LOCKED
), slotted AS (
  SELECT d.${DELIVERY.id}, d.${DELIVERY.subscriptionId}, subs.horizon,
    subs.first_slot + (row_number() OVER (PARTITION BY d.${DELIVERY.subscriptionId} ORDER BY d.${DELIVERY.seq}) - 1) * subs.gap AS slot
  FROM webhook_deliveries d JOIN subs ON subs.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId}
  WHERE ${dueDeliveries(engineFilter)}
), picked AS (
  SELECT ${DELIVERY.id}, ${DELIVERY.subscriptionId}, slot FROM slotted WHERE slot < horizon ORDER BY slot LIMIT $1::int
), paced AS (
  UPDATE webhook_subscriptions s SET ${SUBSCRIPTION.nextDeliveryAt} = last.slot + make_interval(secs => 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond})
  FROM (SELECT ${DELIVERY.subscriptionId}, max(slot) AS slot FROM picked GROUP BY ${DELIVERY.subscriptionId}) last
  WHERE s.${SUBSCRIPTION.id} = last.${DELIVERY.subscriptionId}
  RETURNING s.${SUBSCRIPTION.id}
)
UPDATE webhook_deliveries d SET ${DELIVERY.lockedUntil} = greatest(p.slot, now()) + make_interval(secs => $2::int / 1000.0)
FROM picked p, webhook_subscriptions s, events e
WHERE d.${DELIVERY.id} = p.${DELIVERY.id} AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND e.${EVENT.id} = d.${DELIVERY.eventId}
  AND d.${DELIVERY.status} = 'pending' AND (d.${DELIVERY.lockedUntil} IS NULL OR d.${DELIVERY.lockedUntil} <= now())
RETURNING ${TARGET_COLUMNS}, s.${SUBSCRIPTION.maxDeliveriesPerSecond} AS rate,
  greatest(0, ceil(extract(epoch FROM p.slot - clock_timestamp()) * 1000))::int AS wait_ms`;
}

/** The unpaced claim (the Inngest dispatcher): due deliveries, oldest first, with a lease. */
export function claimSql(engineFilter: string) {
  return `
WITH due AS (
  SELECT d.${DELIVERY.id} FROM webhook_deliveries d
  JOIN webhook_subscriptions s ON s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND s.${SUBSCRIPTION.enabled}
  WHERE ${dueDeliveries(engineFilter)}
  ORDER BY d.${DELIVERY.nextAttemptAt}, d.${DELIVERY.seq}
  LIMIT $1::int
  FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET ${DELIVERY.lockedUntil} = now() + make_interval(secs => $2::int / 1000.0)
FROM due, webhook_subscriptions s, events e
WHERE d.${DELIVERY.id} = due.${DELIVERY.id} AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND e.${EVENT.id} = d.${DELIVERY.eventId}
RETURNING ${TARGET_COLUMNS}, s.${SUBSCRIPTION.maxDeliveriesPerSecond} AS rate, 0 AS wait_ms`;
}
