// The SQL that claims due deliveries: FOR UPDATE SKIP LOCKED and a lease (`locked_until`), so
// several processes on one PostgreSQL never take the same delivery; the paced claim also hands out
// each subscription's send slots (max_deliveries_per_second) across processes.
import { TARGET_COLUMNS } from "./delivery-attempt";

/**
 * How far ahead a claim takes send slots (or one slot, at a rate under 1/this): a claimed delivery
 * waits in the worker for its slot, so this bounds how long a lease is held before sending.
 */
export const PACE_HORIZON_MS = 250;

/** Due, unleased, and not this worker's own (`$3`): the deliveries a claim may take. */
const dueDeliveries = (engineFilter: string) => `d.status = 'pending' AND ${engineFilter} AND d.next_attempt_at <= now()
    AND (d.locked_until IS NULL OR d.locked_until <= now())
    AND NOT (d.id = ANY($3::uuid[]))`;

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
  SELECT s.id, greatest(s.next_delivery_at, now()) AS first_slot,
    make_interval(secs => 1.0 / s.max_deliveries_per_second) AS gap,
    now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.max_deliveries_per_second)) AS horizon
  FROM webhook_subscriptions s
  WHERE s.enabled
    AND s.next_delivery_at < now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.max_deliveries_per_second))
    AND s.id IN (SELECT d.subscription_id FROM webhook_deliveries d WHERE ${dueDeliveries(engineFilter)})
  ORDER BY s.next_delivery_at
  LIMIT $1::int
  FOR UPDATE OF s SKIP LOCKED
), slotted AS (
  SELECT d.id, d.subscription_id, subs.horizon,
    subs.first_slot + (row_number() OVER (PARTITION BY d.subscription_id ORDER BY d.seq) - 1) * subs.gap AS slot
  FROM webhook_deliveries d JOIN subs ON subs.id = d.subscription_id
  WHERE ${dueDeliveries(engineFilter)}
), picked AS (
  SELECT id, subscription_id, slot FROM slotted WHERE slot < horizon ORDER BY slot LIMIT $1::int
), paced AS (
  UPDATE webhook_subscriptions s SET next_delivery_at = last.slot + make_interval(secs => 1.0 / s.max_deliveries_per_second)
  FROM (SELECT subscription_id, max(slot) AS slot FROM picked GROUP BY subscription_id) last
  WHERE s.id = last.subscription_id
  RETURNING s.id
)
UPDATE webhook_deliveries d SET locked_until = greatest(p.slot, now()) + make_interval(secs => $2::int / 1000.0)
FROM picked p, webhook_subscriptions s, events e
WHERE d.id = p.id AND s.id = d.subscription_id AND e.id = d.event_id
  AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= now())
RETURNING ${TARGET_COLUMNS}, s.max_deliveries_per_second AS rate,
  greatest(0, ceil(extract(epoch FROM p.slot - clock_timestamp()) * 1000))::int AS wait_ms`;
}

/** The unpaced claim (the Inngest dispatcher): due deliveries, oldest first, with a lease. */
export function claimSql(engineFilter: string) {
  return `
WITH due AS (
  SELECT d.id FROM webhook_deliveries d
  JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.enabled
  WHERE ${dueDeliveries(engineFilter)}
  ORDER BY d.next_attempt_at, d.seq
  LIMIT $1::int
  FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $2::int / 1000.0)
FROM due, webhook_subscriptions s, events e
WHERE d.id = due.id AND s.id = d.subscription_id AND e.id = d.event_id
RETURNING ${TARGET_COLUMNS}, s.max_deliveries_per_second AS rate, 0 AS wait_ms`;
}
