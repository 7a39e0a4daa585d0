// The Inngest engine (production): one Inngest run per delivery cycle carries out the ladder,
// `step.run` per attempt and `step.sleep` between attempts, with the function's own retries off
// (the ladder is the retry policy). Deliveries reach Inngest through the same outbox claiming as
// the embedded engine: the dispatcher claims due deliveries and sends one event per cycle.
// Selected when Inngest's standard environment variables are set; without them nothing here
// ever calls `inngest.send` (it would hang or fail without a server).
import { Inngest } from "inngest";
import { serve } from "inngest/edge";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import { getDb } from "../db/client";
import { log } from "../lib/log";
import { attemptDelivery, loadDeliveryTarget, type DeliveryTarget } from "./delivery-attempt";
import { DeliveryWorker } from "./embedded-worker";
import { reserveSendSlot, waitForSendSlot } from "./send-slots";
import { takeBreakerTurn } from "./breaker";
import { setting } from "../lib/settings";
import { MAX_ATTEMPTS, MAX_THROTTLED_ATTEMPTS, retryDelays, type DeliveryStatus } from "./retry-ladder";
import { createSlaCheckFunction } from "../conversations/sla-monitor.inngest";
import { createRetentionFunction } from "../retention/retention.inngest";
import { inngestNotConfigured, inngestServing, pinSyncRequest } from "./inngest-endpoint";

export const DELIVERY_REQUESTED = "webhooks/delivery.requested";
export type DeliveryRequested = {
  name: typeof DELIVERY_REQUESTED;
  id?: string;
  data: { delivery_id: string; tenant_id: string; subscription_id: string; cycle: number };
};

export const inngest = new Inngest({ id: "tenant-data-platform" });

/** Inngest's own retries of a delivery run's step after a crash or an error (Inngest's default count). */
export const INNGEST_RETRIES = 4;

const DISPATCHED = "dispatched";

// Columns named through the model (server/db/columns.ts).
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);

/** The dispatched cycle, or the cycle this run already owns ($1 delivery, $2 cycle, $3 run). */
const OWN_CYCLE_SQL = `UPDATE ${TABLE.WebhookDelivery} SET ${DELIVERY.inngestRunId} = $3, ${DELIVERY.lockedUntil} = NULL, ${DELIVERY.updatedAt} = now()
     WHERE ${DELIVERY.id} = $1::uuid AND ((${DELIVERY.cycle} = $2::int AND ${DELIVERY.inngestRunId} = '${DISPATCHED}' AND ${DELIVERY.status} = 'pending') OR ${DELIVERY.inngestRunId} = $3)
     RETURNING ${DELIVERY.cycle}, ${DELIVERY.attemptCount} AS attempts`;
const AUDIT = modelColumns(Prisma.AuditLogScalarFieldEnum);
/** The actor of a rerun from the Inngest console in the audit log. */
export const CONSOLE_RERUN_ACTOR = "Inngest console rerun";
/**
 * A new cycle for this run ($1 delivery, $2 run), recorded in the audit log like a replay from the
 * dashboard (`delivery.replayed`), in the same statement.
 */
const NEW_CYCLE_SQL = `WITH before AS (
  SELECT ${DELIVERY.id}, ${DELIVERY.tenantId}, ${DELIVERY.subscriptionId}, ${DELIVERY.eventId}, ${DELIVERY.cycle}, ${DELIVERY.status}, ${DELIVERY.attemptCount}
  FROM ${TABLE.WebhookDelivery} WHERE ${DELIVERY.id} = $1::uuid FOR UPDATE
), u AS (
  UPDATE ${TABLE.WebhookDelivery} w SET ${DELIVERY.cycle} = w.${DELIVERY.cycle} + 1, ${DELIVERY.attemptCount} = 0, ${DELIVERY.status} = 'pending', ${DELIVERY.inngestRunId} = $2,
       ${DELIVERY.nextAttemptAt} = NULL, ${DELIVERY.lockedUntil} = NULL, ${DELIVERY.deliveredAt} = NULL, ${DELIVERY.updatedAt} = now()
  FROM before WHERE w.${DELIVERY.id} = before.${DELIVERY.id} RETURNING w.${DELIVERY.cycle}
), audit AS (
  INSERT INTO ${TABLE.AuditLog} (${AUDIT.id}, ${AUDIT.tenantId}, ${AUDIT.actorType}, ${AUDIT.actorId}, ${AUDIT.actorLabel}, ${AUDIT.action}, ${AUDIT.targetType}, ${AUDIT.targetId}, ${AUDIT.details}, ${AUDIT.createdAt})
  SELECT gen_random_uuid(), b.${DELIVERY.tenantId}, 'system', NULL, '${CONSOLE_RERUN_ACTOR}', 'delivery.replayed', 'webhook_delivery', b.${DELIVERY.id}::text,
    jsonb_build_object('subscription_id', b.${DELIVERY.subscriptionId}, 'event_id', 'evt_' || b.${DELIVERY.eventId}, 'cycle', b.${DELIVERY.cycle} + 1,
      'previous_state', CASE b.${DELIVERY.status} WHEN 'pending' THEN CASE WHEN b.${DELIVERY.attemptCount} > 0 THEN 'retrying' ELSE 'pending' END
        WHEN 'permanent_fail' THEN 'failed' WHEN 'dead_letter' THEN 'dead_lettered' ELSE 'delivered' END,
      'inngest_run_id', $2::text), now()
  FROM before b
)
SELECT ${DELIVERY.cycle}, 0 AS attempts FROM u`;
/**
 * A run held back too long (an open breaker, a disabled subscription) gives its delivery back to
 * the dispatcher ($1 delivery, $2 cycle, $3 ms until due): claimable again then, attempts as they are.
 */
const HAND_BACK_SQL = `UPDATE ${TABLE.WebhookDelivery} SET ${DELIVERY.inngestRunId} = NULL, ${DELIVERY.lockedUntil} = NULL,
       ${DELIVERY.nextAttemptAt} = now() + make_interval(secs => $3::int / 1000.0), ${DELIVERY.updatedAt} = now()
     WHERE ${DELIVERY.id} = $1::uuid AND ${DELIVERY.cycle} = $2::int AND ${DELIVERY.status} = 'pending' AND ${DELIVERY.inngestRunId} <> '${DISPATCHED}'`;
/**
 * A run that failed for good ($1 delivery, $2 its run id, $3 ms until due) gives its delivery back
 * to the dispatcher, if it still held it (or had not yet taken it): a new due time, so a new event id.
 */
const HAND_BACK_FAILED_SQL = `UPDATE ${TABLE.WebhookDelivery} SET ${DELIVERY.inngestRunId} = NULL, ${DELIVERY.lockedUntil} = NULL,
       ${DELIVERY.nextAttemptAt} = now() + make_interval(secs => $3::int / 1000.0), ${DELIVERY.updatedAt} = now()
     WHERE ${DELIVERY.id} = $1::uuid AND ${DELIVERY.status} = 'pending' AND ${DELIVERY.inngestRunId} IN ($2, '${DISPATCHED}')`;
/**
 * The deliveries about to be handed to Inngest ($1 ids): no embedded worker claims them any more,
 * and their dispatcher lease stays until a run takes them (beginCycle). Marked before the event is
 * sent: Inngest may start the run before `send` returns, and the run must find its cycle dispatched.
 */
const MARK_DISPATCHED_SQL = `UPDATE ${TABLE.WebhookDelivery} SET ${DELIVERY.inngestRunId} = '${DISPATCHED}'
     WHERE ${DELIVERY.id} = ANY($1::uuid[]) AND (${DELIVERY.inngestRunId} IS NULL OR ${DELIVERY.inngestRunId} = '${DISPATCHED}')`;
/**
 * What the dispatcher claims: deliveries no engine holds, and deliveries it dispatched whose lease
 * ran out with no run taking them (the send failed, or the process died before or after it): sent
 * again with the same event id, which Inngest ignores if the first send had arrived.
 */
export const DISPATCHER_CLAIMS = `(d.${DELIVERY.inngestRunId} IS NULL OR d.${DELIVERY.inngestRunId} = '${DISPATCHED}')`;

/**
 * First step of a run: take ownership of the delivery's cycle. The run the dispatcher asked for
 * takes the dispatched cycle; any other run of the same delivery (a rerun from the Inngest console)
 * starts a new cycle, like a dashboard replay and audited as one, so earlier attempts stay intact.
 * (A duplicate event cannot start one: every event carries an id Inngest deduplicates.)
 */
export async function beginCycle(db: PrismaClient, deliveryId: string, requestedCycle: number, runId: string): Promise<Cycle | null> {
  const own = await db.$queryRawUnsafe<Cycle[]>(OWN_CYCLE_SQL, deliveryId, requestedCycle, runId);
  if (own.length) return own[0];
  const next = await db.$queryRawUnsafe<Cycle[]>(NEW_CYCLE_SQL, deliveryId, runId);
  return next[0] ?? null; // null: the delivery (or its subscription) was deleted
}

/** The cycle a run owns and the attempts already made in it (a delivery handed back resumes after them). */
type Cycle = { cycle: number; attempts: number };

export type StepResult = {
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  next_delay_ms: number | null;
  /**
   * Set when the attempt was not made: its send slot, or its subscription's next breaker probe, is
   * this far away (a durable sleep, then the attempt).
   */
  slot_in_ms?: number;
  /** Set when the attempt was not made because the subscription is disabled. */
  disabled?: true;
  /**
   * Set when the attempt was not made because a consumer's Retry-After holds the subscription
   * (`slot_in_ms`: until its end): after the sleep, the attempt takes a new send slot.
   */
  held?: true;
};

/** A run held back by an open breaker sleeps at most this many times per attempt (Inngest bounds a run's steps). */
export const MAX_HELD_SLEEPS = 100;

/** A wait for a send slot up to this long happens inside the attempt's step; a longer one is a step.sleep. */
export const IN_STEP_SLOT_WAIT_MS = 1_000;

/**
 * Attempt `attemptNumber` of `cycle`; a step re-executed after it was recorded reports the record.
 * Unless `slotTaken` (the run already slept until its slot), it first takes a send slot: a near one
 * is waited for here, a far one is returned as `slot_in_ms` without attempting.
 */
export async function runAttemptStep(db: PrismaClient, deliveryId: string, cycle: number, attemptNumber: number, slotTaken = false): Promise<StepResult> {
  const target = await loadDeliveryTarget(db, deliveryId);
  if (!target || target.cycle !== cycle) return { attempt: attemptNumber, status: "permanent_fail", status_code: null, next_delay_ms: null };
  if (target.attempt_count !== attemptNumber - 1 || target.status !== "pending") {
    return { attempt: attemptNumber, status: target.status as DeliveryStatus, status_code: null, next_delay_ms: null };
  }
  // An open breaker holds the attempt (no rung spent) until it may be the probe; a disabled subscription, until enabled.
  const breaker = await takeBreakerTurn(db, deliveryId);
  if (breaker.disabled) return { attempt: attemptNumber, status: "pending", status_code: null, next_delay_ms: null, slot_in_ms: 0, disabled: true };
  if (breaker.waitMs > 0) return { attempt: attemptNumber, status: "pending", status_code: null, next_delay_ms: null, slot_in_ms: breaker.waitMs };
  if (!slotTaken) {
    const askedAt = Date.now();
    const waitMs = await reserveSendSlot(db, deliveryId);
    if (waitMs > IN_STEP_SLOT_WAIT_MS) return { attempt: attemptNumber, status: "pending", status_code: null, next_delay_ms: null, slot_in_ms: waitMs };
    await waitForSendSlot(db, deliveryId, waitMs, askedAt);
  }
  // The statement that marks the attempt started reads the hold too: one answered since this run's
  // slot was taken (by any process) holds this attempt, unspent, until its end.
  const result = await attemptDelivery(db, target, { engine: "inngest" });
  if (result.heldMs !== undefined)
    return { attempt: attemptNumber, status: "pending", status_code: null, next_delay_ms: null, slot_in_ms: result.heldMs, held: true };
  return { attempt: attemptNumber, status: result.status, status_code: result.statusCode, next_delay_ms: result.nextDelayMs };
}

export const deliverWebhook = inngest.createFunction(
  {
    id: "deliver-webhook",
    // Inngest's retries are for the run's own failures, never the consumer's (the ladder is the
    // retry policy: an attempt's outcome is a step's result, not an error). A step that could not
    // finish — the process died mid-step, the database was unreachable — is run again; an attempt
    // already recorded is not sent again (runAttemptStep), so a retry never records a second one.
    retries: INNGEST_RETRIES,
    triggers: [{ event: DELIVERY_REQUESTED }],
    // Retries used up (the app unreachable or failing for that long): the delivery goes back to the
    // dispatcher, due after the ladder's first retry delay, and a new run picks it up then.
    onFailure: async ({ event }) => {
      const failed = event.data as { run_id: string; event: DeliveryRequested };
      const dueInMs = retryDelays()[1];
      await (await getDb()).$executeRawUnsafe(HAND_BACK_FAILED_SQL, failed.event.data.delivery_id, failed.run_id, dueInMs);
      log.warn({ delivery_id: failed.event.data.delivery_id, run_id: failed.run_id }, "webhook delivery run failed; delivery handed back to the dispatcher");
    },
    // The same caps as the embedded worker's claim: attempts executing at once per subscription and per tenant.
    concurrency: [
      { key: "event.data.subscription_id", limit: setting("WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT") },
      { key: "event.data.tenant_id", limit: setting("WEBHOOK_MAX_IN_FLIGHT_PER_TENANT") },
    ],
  },
  async ({ event, step, runId }) => {
    const { delivery_id: deliveryId, cycle: requested } = (event as unknown as DeliveryRequested).data;
    const begun = await step.run("begin-cycle", async () => beginCycle(await getDb(), deliveryId, requested, runId));
    if (begun === null) return { delivery_id: deliveryId, status: "gone" };
    const cycle = begun.cycle;
    // Attempt numbers count the throttled attempts too (a 429 honoured spends no rung).
    for (let n = begun.attempts + 1; n <= MAX_ATTEMPTS + MAX_THROTTLED_ATTEMPTS; n++) {
      let result = await step.run(`attempt-${n}`, async () => runAttemptStep(await getDb(), deliveryId, cycle, n));
      // The rate limit's slot is far off (a backlog, or the consumer's Retry-After), or an open breaker
      // holds the attempt until its next probe: sleep durably, then send (or ask the breaker again).
      // After a hold, the attempt takes a new slot: the runs it held do not all go at its end.
      for (let k = 1; result.slot_in_ms !== undefined && !result.disabled && k <= MAX_HELD_SLEEPS; k++) {
        const suffix = k === 1 ? "" : `-${k}`;
        const slotTaken = !result.held;
        await step.sleep(`slot-${n}${suffix}`, result.slot_in_ms);
        result = await step.run(`attempt-${n}-in-slot${suffix}`, async () => runAttemptStep(await getDb(), deliveryId, cycle, n, slotTaken));
      }
      // Disabled, or still held after that many sleeps: the dispatcher sends the delivery again once it is due
      // and its subscription enabled (a new run, same cycle, its attempts kept).
      if (result.slot_in_ms !== undefined) {
        const dueInMs = result.slot_in_ms;
        await step.run(`hand-back-${n}`, async () => (await getDb()).$executeRawUnsafe(HAND_BACK_SQL, deliveryId, cycle, dueInMs));
        return { delivery_id: deliveryId, cycle, status: "held" };
      }
      if (result.status !== "pending" || result.next_delay_ms === null) return { delivery_id: deliveryId, cycle, ...result };
      await step.sleep(`backoff-${n + 1}`, result.next_delay_ms);
    }
    return { delivery_id: deliveryId, cycle, status: "dead_letter" };
  },
);

type Send = (events: DeliveryRequested[]) => Promise<unknown>;

/**
 * Hands claimed deliveries to Inngest: one event per (delivery, cycle, due time), deduplicated by
 * its id (a delivery handed back by a held run is due later: a new id, not a duplicate).
 */
export async function dispatchToInngest(db: PrismaClient, claimed: (DeliveryTarget & { due_ms?: string })[], send: Send): Promise<void> {
  if (!claimed.length) return;
  await db.$executeRawUnsafe(
    MARK_DISPATCHED_SQL,
    claimed.map((c) => c.delivery_id),
  );
  await send(
    claimed.map((c) => ({
      name: DELIVERY_REQUESTED,
      id: `${c.delivery_id}-${c.cycle}-${c.due_ms ?? 0}`,
      data: { delivery_id: c.delivery_id, tenant_id: c.tenant_id, subscription_id: c.subscription_id, cycle: c.cycle },
    })),
  );
  // After a failed send the leases simply expire and the next pass sends again (same ids).
}

/** The dispatcher: the embedded worker's claiming with Inngest as the runner. */
export function createInngestDispatcher(send: Send = (events) => inngest.send(events)) {
  return new DeliveryWorker({
    paced: false,
    engineFilter: DISPATCHER_CLAIMS,
    handle: (db, claimed) =>
      dispatchToInngest(db, claimed, send).catch((err) => {
        log.warn({ error: err, deliveries: claimed.length }, "webhook dispatch to Inngest failed; will retry");
      }),
    leaseMs: 30_000,
  });
}

/** The handoff SLA check, every minute (server/conversations/sla-monitor.inngest.ts). */
export const checkHandoffSla = createSlaCheckFunction(inngest);

/** The retention purge and due tenant deletions, hourly (server/retention/retention.inngest.ts). */
export const retentionPurge = createRetentionFunction(inngest);

let served: { url: URL; handle: (req: Request) => Promise<Response> } | { notServed: string } | undefined;

/**
 * Inngest's endpoint (`/api/inngest`): the delivery function, the retention purge and the SLA check served to an Inngest server, as a plain
 * `(Request) => Promise<Response>` that both the app-router route file and the lean front mount. The URL
 * Inngest is told to call is the configured one (inngest-endpoint.ts), never the request's Host; without a
 * signing key (or a dev server) it answers a 404 "not configured".
 */
export async function handleInngestRequest(req: Request): Promise<Response> {
  if (served === undefined) {
    const serving = inngestServing();
    served =
      "notServed" in serving
        ? serving
        : {
            url: serving.url,
            handle: serve({
              client: inngest,
              functions: [deliverWebhook, checkHandoffSla, retentionPurge],
              serveOrigin: serving.url.origin,
              servePath: serving.url.pathname,
            }),
          };
  }
  if ("notServed" in served) return inngestNotConfigured(served.notServed);
  return served.handle(pinSyncRequest(req, served.url));
}
