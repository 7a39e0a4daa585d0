// A subscription's circuit breaker, for runners that do not claim through the paced claim (the
// Inngest engine's runs): the state is the subscription's `breaker_probe_at` (null: closed), which
// every attempt's record keeps (server/webhooks/delivery-attempt.ts) and the embedded worker's claim
// reads (server/webhooks/claim-deliveries.ts). While it is open, one attempt at a time becomes the
// probe once its time has come; every other waits, spending nothing.
import { modelColumns, TABLE } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import { setting } from "../lib/settings";
import { queryOn } from "../db/database";
import { statement } from "../lib/sql";

// Columns named through the model (server/db/columns.ts).
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);

/** $1 delivery, $2 probe interval ms: 0 to go now (closed, or this attempt is the probe), else ms until the next probe. */
const BREAKER_TURN_SQL = statement<{ wait_ms: number; disabled: boolean }>(`
WITH s0 AS (
  SELECT s.${SUBSCRIPTION.id}, s.${SUBSCRIPTION.breakerProbeAt} AS probe_at,
    (s.${SUBSCRIPTION.enabled} AND t.${TENANT.suspendedAt} IS NULL) AS ${SUBSCRIPTION.enabled} FROM ${TABLE.WebhookSubscription} s
  JOIN ${TABLE.WebhookDelivery} d ON d.${DELIVERY.subscriptionId} = s.${SUBSCRIPTION.id}
  JOIN ${TABLE.Tenant} t ON t.${TENANT.id} = s.${SUBSCRIPTION.tenantId}
  WHERE d.${DELIVERY.id} = $1::uuid
  FOR UPDATE OF s
), taken AS (
  UPDATE ${TABLE.WebhookSubscription} s SET ${SUBSCRIPTION.breakerProbeAt} = now() + make_interval(secs => $2::int / 1000.0)
  FROM s0 WHERE s.${SUBSCRIPTION.id} = s0.${SUBSCRIPTION.id} AND s0.probe_at <= now() AND s0.${SUBSCRIPTION.enabled}
  RETURNING s.${SUBSCRIPTION.id}
)
SELECT CASE WHEN s0.probe_at IS NULL OR EXISTS (SELECT 1 FROM taken) THEN 0
  ELSE greatest(1, ceil(extract(epoch FROM s0.probe_at - clock_timestamp()) * 1000))::int END AS wait_ms,
  NOT s0.${SUBSCRIPTION.enabled} AS disabled
FROM s0`);

/**
 * Asks the breaker of the delivery's subscription whether an attempt may go: `waitMs` 0 when it is
 * closed or this attempt takes the probe (the next probe then moves a probe interval on), otherwise
 * how long until the next probe is due; `disabled` when the subscription is disabled or its tenant
 * suspended (nothing goes; the run hands the delivery back to the dispatcher, which skips it until then).
 * Goes when the delivery is gone (the attempt step finds that out).
 */
export async function takeBreakerTurn(db: PrismaClient, deliveryId: string): Promise<{ waitMs: number; disabled: boolean }> {
  const rows = await queryOn(db, BREAKER_TURN_SQL, [deliveryId, setting("WEBHOOK_BREAKER_PROBE_INTERVAL_MS")]);
  return { waitMs: rows[0]?.wait_ms ?? 0, disabled: rows[0]?.disabled ?? false };
}
