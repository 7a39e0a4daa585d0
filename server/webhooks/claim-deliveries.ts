// The SQL that claims due deliveries: FOR UPDATE SKIP LOCKED and a lease (`locked_until`), so
// several processes on one PostgreSQL never take the same delivery; the paced claim also hands out
// each subscription's send slots (max_deliveries_per_second) across processes, and keeps each
// endpoint's and tenant's attempts in flight under their caps and an open breaker to its probes.
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { TARGET_COLUMNS } from "./delivery-attempt";
import { setting } from "../lib/settings";

// Columns named through the model (server/db/columns.ts).
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

/** A suspended tenant's deliveries are not claimed: they wait, pending and in order, until it is resumed (server/tenants/lifecycle.ts). */
const tenantNotSuspended = (tenantIdSql: string) =>
  `NOT EXISTS (SELECT 1 FROM ${TABLE.Tenant} t WHERE t.${TENANT.id} = ${tenantIdSql} AND t.${TENANT.suspendedAt} IS NOT NULL)`;

/**
 * How far ahead a claim takes send slots (or one slot, at a rate under 1/this): a claimed delivery
 * waits in the worker for its slot, so this bounds how long a lease is held before sending.
 */
export const PACE_HORIZON_MS = 250;

/**
 * Send slots are spaced a little wider than 1/rate: PACE_MARGIN of a second per second, so a send
 * up to LATE_SEND_MS late (a timer, a claim's round trip, another process) still leaves every
 * sliding second at the consumer with at most `rate` sends.
 */
const PACE_MARGIN = 0.1;

/** The interval between two send slots of a subscription at `rate` deliveries a second (SQL). */
export const slotGap = (rate: string) => `make_interval(secs => ${1 + PACE_MARGIN} / ${rate})`;

/**
 * A comma-separated list of ids as uuid[], in a subquery: PostgreSQL evaluates it once per claim
 * (an initplan), where the bare expression is parsed again for every row it is compared with (the
 * cast keeps `= ANY(…)` from reading the subquery as a set of rows).
 */
const idList = (param: string) => `(SELECT string_to_array(${param}::text, ',')::uuid[])::uuid[]`;

/**
 * Due, unleased, and not this worker's own (`$3`, comma-separated ids: one text parameter, the same
 * on every driver): the deliveries a claim may take (`a`: the table's alias).
 */
const dueDeliveries = (
  engineFilter: string,
  a = "d",
) => `${a}.${DELIVERY.status} = 'pending' AND ${engineFilter.replaceAll("d.", `${a}.`)} AND ${a}.${DELIVERY.nextAttemptAt} <= now()
    AND (${a}.${DELIVERY.lockedUntil} IS NULL OR ${a}.${DELIVERY.lockedUntil} <= now())
    AND NOT (${a}.${DELIVERY.id} = ANY(${idList("$3")}))`;

/**
 * Attempts in flight: unexpired leases of pending deliveries, per subscription and tenant. Every
 * process's claims hold leases, so the caps below hold across processes sharing PostgreSQL: the
 * per-endpoint one exactly (see pacedClaimSql on rows changed after the snapshot); the per-tenant one
 * exactly within a process, and up to once per process for claims on different endpoints of a tenant
 * at the same moment (docs/dashboard-webhooks-crm-audit.md). Not the
 * claiming worker's own attempts already answered with a success ($8, comma-separated ids): their
 * endpoint is done with them, only their record is on its way (it takes the lease off); their place
 * is free for the next delivery at once. A failure keeps its place until recorded (the breaker's
 * count moves with the record).
 */
const leasedSql = () => `leased AS (
  SELECT l.${DELIVERY.subscriptionId}, l.${DELIVERY.tenantId}, count(*)::int AS n FROM ${TABLE.WebhookDelivery} l
  WHERE l.${DELIVERY.lockedUntil} > now() AND l.${DELIVERY.status} = 'pending'
    AND NOT (l.${DELIVERY.id} = ANY(${idList("$8")}))
  GROUP BY l.${DELIVERY.subscriptionId}, l.${DELIVERY.tenantId}
), tenant_leased AS (
  SELECT ${DELIVERY.tenantId}, sum(n)::int AS n FROM leased GROUP BY ${DELIVERY.tenantId}
)`;

/**
 * The subscriptions with pending deliveries, one index probe each (a skip scan of the partial index
 * webhook_deliveries_pending_subscription_idx, whose predicate each probe states: `> q.id` implies
 * `IS NOT NULL`): the claim looks at these, however many enabled subscriptions without work the
 * database holds. Ends with one NULL row.
 */
const pendingSubscriptionsSql = () => `pending_subscriptions(id) AS (
  (SELECT p.${DELIVERY.subscriptionId} FROM ${TABLE.WebhookDelivery} p
    WHERE p.${DELIVERY.status} = 'pending' AND p.${DELIVERY.subscriptionId} IS NOT NULL ORDER BY p.${DELIVERY.subscriptionId} LIMIT 1)
  UNION ALL
  SELECT (SELECT p.${DELIVERY.subscriptionId} FROM ${TABLE.WebhookDelivery} p
    WHERE p.${DELIVERY.status} = 'pending' AND p.${DELIVERY.subscriptionId} > q.id ORDER BY p.${DELIVERY.subscriptionId} LIMIT 1)
  FROM pending_subscriptions q WHERE q.id IS NOT NULL
)`;

/**
 * The paced, fair claim ($1 capacity, $2 lease ms, $3 own in-flight ids, $4 horizon ms, $5 in-flight
 * cap per subscription, $6 per tenant, $7 breaker probe interval ms, $8 own attempts answered with a
 * success and not recorded yet). Each subscription with due
 * deliveries and room under its caps is locked (SKIP LOCKED: one claimer at a time per subscription,
 * in every process); an open breaker gives room for one probe once its time has come (and moves the
 * next probe a probe interval on). Its due deliveries get consecutive send slots 1/rate apart from
 * its next free slot, in creation order, as far as the horizon and its room reach; tenants take
 * turns (every tenant's first before anyone's second), each within its own room. The subscription's
 * next free slot moves past the last one taken. Deliveries held back are untouched: same order, no
 * attempt spent. Every row says how long to wait for its slot (`wait_ms`); the lease runs from the slot.
 *
 * A subscription row locked after another claim on it committed, later than this statement's
 * snapshot (READ COMMITTED locks the row's newest version and re-checks it, while the leases are
 * still counted as of the snapshot, without that claim's), is left alone: its count would miss that
 * claim's leases, and the caps would not hold. Every claim that takes anything moves the row's
 * `next_delivery_at` forward, so the locked row's value differs from the snapshot's exactly then.
 * The answer has a row even when nothing was claimed (delivery columns null), and every row says how
 * many subscriptions were left alone so (`changed_skipped`): the worker claims again at once, with a
 * fresh snapshot.
 */
export function pacedClaimSql(engineFilter: string) {
  const room = `CASE WHEN s.${SUBSCRIPTION.breakerProbeAt} IS NULL THEN $5::int ELSE 1 END
      - coalesce((SELECT sum(n) FROM leased WHERE leased.${DELIVERY.subscriptionId} = s.${SUBSCRIPTION.id}), 0)`;
  const tenantRoom = `$6::int - coalesce((SELECT n FROM tenant_leased t WHERE t.${DELIVERY.tenantId} = s.${SUBSCRIPTION.tenantId}), 0)`;
  // Index-driven: the subscriptions with pending deliveries come from the skip scan, each by its
  // primary key (an array, which the planner reads as a few rows: with the skip scan as a join
  // input it guessed 100 and scanned every subscription). Whether one has a due delivery, and its
  // first due ones in order, are walks of its own pending deliveries from the oldest
  // (webhook_deliveries (subscription_id, status, seq), in its order: a bare LIMIT 1 let the planner
  // hope a table scan finds one soon); the due check is a per-row subquery, not an EXISTS, which the
  // planner turned into a scan of every due delivery of every endpoint.
  const ownDue = (a: string) => `${a}.${DELIVERY.subscriptionId} = s.${SUBSCRIPTION.id} AND ${dueDeliveries(engineFilter, a)}`;
  return `
WITH RECURSIVE ${pendingSubscriptionsSql()}, ${leasedSql()}, locked AS (
  SELECT s.${SUBSCRIPTION.id}, s.${SUBSCRIPTION.tenantId}, s.${SUBSCRIPTION.nextDeliveryAt}, greatest(s.${SUBSCRIPTION.nextDeliveryAt}, clock_timestamp()) AS first_slot,
    ${slotGap(`s.${SUBSCRIPTION.maxDeliveriesPerSecond}`)} AS gap,
    now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond})) AS horizon,
    ${room} AS room, ${tenantRoom} AS tenant_room
  FROM ${TABLE.WebhookSubscription} s
  WHERE s.${SUBSCRIPTION.id} = ANY(ARRAY(SELECT id FROM pending_subscriptions WHERE id IS NOT NULL))
    AND s.${SUBSCRIPTION.enabled} AND ${tenantNotSuspended(`s.${SUBSCRIPTION.tenantId}`)}
    AND (s.${SUBSCRIPTION.breakerProbeAt} IS NULL OR s.${SUBSCRIPTION.breakerProbeAt} <= now())
    AND ${room} > 0 AND ${tenantRoom} > 0
    AND s.${SUBSCRIPTION.nextDeliveryAt} < now() + make_interval(secs => greatest($4::int / 1000.0, 1.0 / s.${SUBSCRIPTION.maxDeliveriesPerSecond}))
    AND (SELECT true FROM ${TABLE.WebhookDelivery} x WHERE ${ownDue("x")} ORDER BY x.${DELIVERY.status}, x.${DELIVERY.seq} LIMIT 1)
  ORDER BY s.${SUBSCRIPTION.nextDeliveryAt}
  LIMIT $1::int
  FOR UPDATE OF s SKIP LOCKED
), subs AS (
  -- The locked row against the same row in this statement's snapshot (one primary-key probe per
  -- locked subscription): unchanged unless a claim committed after the snapshot (see above).
  SELECT l.*, l.${SUBSCRIPTION.nextDeliveryAt} = (SELECT v.${SUBSCRIPTION.nextDeliveryAt} FROM ${TABLE.WebhookSubscription} v WHERE v.${SUBSCRIPTION.id} = l.${SUBSCRIPTION.id}) AS unchanged
  FROM locked l
), slotted AS (
  SELECT f.${DELIVERY.id}, s.${SUBSCRIPTION.id} AS ${DELIVERY.subscriptionId}, s.${SUBSCRIPTION.tenantId}, s.horizon, s.room, s.tenant_room, f.rank,
    s.first_slot + (f.rank - 1) * s.gap AS slot, f.started
  FROM subs s CROSS JOIN LATERAL (
    SELECT y.${DELIVERY.id}, y.${DELIVERY.attemptStartedAt} IS NOT NULL AS started, row_number() OVER (ORDER BY y.${DELIVERY.seq}) AS rank
    FROM (SELECT y.${DELIVERY.id}, y.${DELIVERY.seq}, y.${DELIVERY.attemptStartedAt} FROM ${TABLE.WebhookDelivery} y WHERE ${ownDue("y")}
      ORDER BY y.${DELIVERY.status}, y.${DELIVERY.seq} LIMIT greatest(s.room, 0)) y
  ) f
  WHERE s.unchanged
), eligible AS (
  SELECT *, row_number() OVER (PARTITION BY ${SUBSCRIPTION.tenantId} ORDER BY slot) AS tenant_rank
  FROM slotted WHERE slot < horizon
), picked AS (
  SELECT ${DELIVERY.id}, ${DELIVERY.subscriptionId}, slot, started FROM eligible WHERE tenant_rank <= tenant_room ORDER BY tenant_rank, slot LIMIT $1::int
), paced AS (
  UPDATE ${TABLE.WebhookSubscription} s SET ${SUBSCRIPTION.nextDeliveryAt} = last.slot + ${slotGap(`s.${SUBSCRIPTION.maxDeliveriesPerSecond}`)},
    ${SUBSCRIPTION.breakerProbeAt} = CASE WHEN s.${SUBSCRIPTION.breakerProbeAt} IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int / 1000.0) END
  FROM (SELECT ${DELIVERY.subscriptionId}, max(slot) AS slot FROM picked GROUP BY ${DELIVERY.subscriptionId}) last
  WHERE s.${SUBSCRIPTION.id} = last.${DELIVERY.subscriptionId}
  RETURNING s.${SUBSCRIPTION.id}
), claimed AS (
  UPDATE ${TABLE.WebhookDelivery} d SET ${DELIVERY.lockedUntil} = greatest(p.slot, now()) + make_interval(secs => $2::int / 1000.0),
    ${DELIVERY.attemptStartedAt} = now()
  FROM picked p, ${TABLE.WebhookSubscription} s, ${TABLE.Event} e
  WHERE d.${DELIVERY.id} = p.${DELIVERY.id} AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND e.${EVENT.id} = d.${DELIVERY.eventId}
    AND d.${DELIVERY.status} = 'pending' AND (d.${DELIVERY.lockedUntil} IS NULL OR d.${DELIVERY.lockedUntil} <= now())
  RETURNING ${TARGET_COLUMNS}, s.${SUBSCRIPTION.maxDeliveriesPerSecond} AS rate, p.started AS possible_repeat,
    ceil(extract(epoch FROM p.slot - clock_timestamp()) * 1000)::int AS wait_ms
)
SELECT c.*, x.changed_skipped FROM (SELECT count(*)::int AS changed_skipped FROM subs WHERE NOT subs.unchanged) x LEFT JOIN claimed c ON true`;
}

/** The fairness limits a paced claim applies ($5..$7 of pacedClaimSql), from the settings. */
export function fairnessLimits(): [perEndpoint: number, perTenant: number, probeIntervalMs: number] {
  return [setting("WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT"), setting("WEBHOOK_MAX_IN_FLIGHT_PER_TENANT"), setting("WEBHOOK_BREAKER_PROBE_INTERVAL_MS")];
}

/** The unpaced claim (the Inngest dispatcher): due deliveries, oldest first, with a lease. */
export function claimSql(engineFilter: string) {
  return `
WITH due AS (
  SELECT d.${DELIVERY.id} FROM ${TABLE.WebhookDelivery} d
  JOIN ${TABLE.WebhookSubscription} s ON s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND s.${SUBSCRIPTION.enabled}
  WHERE ${dueDeliveries(engineFilter)} AND ${tenantNotSuspended(`s.${SUBSCRIPTION.tenantId}`)}
  ORDER BY d.${DELIVERY.nextAttemptAt}, d.${DELIVERY.seq}
  LIMIT $1::int
  FOR UPDATE OF d SKIP LOCKED
)
UPDATE ${TABLE.WebhookDelivery} d SET ${DELIVERY.lockedUntil} = now() + make_interval(secs => $2::int / 1000.0)
FROM due, ${TABLE.WebhookSubscription} s, ${TABLE.Event} e
WHERE d.${DELIVERY.id} = due.${DELIVERY.id} AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId} AND e.${EVENT.id} = d.${DELIVERY.eventId}
RETURNING ${TARGET_COLUMNS}, s.${SUBSCRIPTION.maxDeliveriesPerSecond} AS rate, 0 AS wait_ms,
  (extract(epoch FROM d.${DELIVERY.nextAttemptAt}) * 1000)::bigint::text AS due_ms`;
}
