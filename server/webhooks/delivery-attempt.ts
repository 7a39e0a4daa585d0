// One delivery attempt, the same for both engines: send the signed envelope, then record the
// attempt and the delivery's next state in one statement. The statement appends the attempt row
// only if the delivery is still at that (cycle, attempt) — a replay, a second worker that took an
// expired lease, or a re-executed Inngest step can never overwrite or duplicate an earlier record.
import { isDatabaseUnavailable } from "../lib/database-errors";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import { getSql, sqlIfOpen, type SqlRunner } from "../db/client";
import { decryptSecret } from "../crypto/secret-box";
import { eventWireId, toEnvelope } from "../events/catalog";
import { log, withLogFields } from "../lib/log";
import { traceClientCall, tracingEnabled } from "../observability/tracing";
import { recordWebhookAttempt } from "../observability/metrics";
import { setting } from "../lib/settings";
import { attemptTimeoutMs, parseRetryAfter, planNext, truncateBody, type AttemptOutcome, type AttemptPlan, type DeliveryStatus } from "./retry-ladder";
import { sendWebhook, type SendResult } from "./send-webhook";
import { heldFor, holdSubscription } from "./subscription-holds";
import { REQUEST_BODY_LIMIT } from "./webhooks.types";

/** A claimed or loaded delivery with what its attempt needs (one row of a join). */
export type DeliveryTarget = {
  delivery_id: string;
  tenant_id: string;
  subscription_id: string;
  cycle: number;
  attempt_count: number;
  /** Attempts of this cycle answered 429 with Retry-After that spent no rung. */
  throttled_count: number;
  status: string;
  target_url: string;
  secret_encrypted: string;
  /** The secret a roll replaced, while it still signs (null otherwise). */
  previous_secret_encrypted: string | null;
  event_id: string;
  event_type: string;
  event_data: unknown;
  event_created_at: Date;
  /** The request that caused the event, and its span when tracing was on (`traceparent`): the attempt joins that trace. */
  event_request_id?: string | null;
  event_trace_parent?: string | null;
  /**
   * Whether the previous run of this attempt was started and never recorded (its worker stopped or
   * died): set by the claim that marked the attempt started; absent when the caller did not mark it.
   */
  possible_repeat?: boolean;
};

// Every column below is named through the model (server/db/columns.ts); the aliases are DeliveryTarget's keys.
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const ATTEMPT = modelColumns(Prisma.WebhookAttemptScalarFieldEnum);
const NOTIFICATION = modelColumns(Prisma.NotificationScalarFieldEnum);
const AUDIT = modelColumns(Prisma.AuditLogScalarFieldEnum);

/**
 * Columns selected by every query that produces a DeliveryTarget (`d` deliveries, `s` subscriptions,
 * `e` events). A cycle's first attempt has no attempts before it to count (the common case: no lookup).
 */
export const TARGET_COLUMNS = `d.${DELIVERY.id}::text AS delivery_id, d.${DELIVERY.tenantId}::text AS tenant_id, d.${DELIVERY.subscriptionId}::text AS subscription_id,
  d.${DELIVERY.cycle} AS cycle, d.${DELIVERY.attemptCount} AS attempt_count, d.${DELIVERY.status} AS status,
  s.${SUBSCRIPTION.targetUrl} AS target_url, s.${SUBSCRIPTION.secretEncrypted} AS secret_encrypted,
  CASE WHEN d.${DELIVERY.attemptCount} = 0 THEN 0 ELSE (SELECT count(*)::int FROM ${TABLE.WebhookAttempt} t
    WHERE t.${ATTEMPT.deliveryId} = d.${DELIVERY.id} AND t.${ATTEMPT.cycle} = d.${DELIVERY.cycle} AND t.${ATTEMPT.throttled}) END AS throttled_count,
  CASE WHEN s.${SUBSCRIPTION.previousSecretExpiresAt} > now() THEN s.${SUBSCRIPTION.previousSecretEncrypted} END AS previous_secret_encrypted,
  e.${EVENT.id}::text AS event_id, e.${EVENT.type} AS event_type, e.${EVENT.data} AS event_data, e.${EVENT.createdAt} AS event_created_at,
  e.${EVENT.requestId} AS event_request_id, e.${EVENT.traceParent} AS event_trace_parent`;

export type AttemptResult = {
  attemptNumber: number;
  outcome: AttemptOutcome;
  status: DeliveryStatus;
  statusCode: number | null;
  nextDelayMs: number | null;
  /** true: a 429 with Retry-After, retried after it without spending a rung. */
  throttled: boolean;
  /** false when the delivery moved on meanwhile (replayed, or recorded by another runner). */
  recorded: boolean;
  /** Set when nothing was sent: the subscription is held (a consumer's Retry-After) this many ms more. */
  heldMs?: number;
};

/** Which engine made an attempt (kept on its row, shown on the dashboard and by the CLI). */
type AttemptEngine = "embedded" | "inngest";

/** `disabled_reason` of a subscription the platform disabled because it kept failing. */
const DISABLED_FAILING = "endpoint_failing";
/** The subscription (`s`, before the update) is to be disabled by this failure. */
const disableNow = `coalesce($21::text = 'failure' AND s.${SUBSCRIPTION.enabled} AND s.${SUBSCRIPTION.failingSince} <= now() - make_interval(secs => $24::int), false)`;

const RECORD_SQL = `
WITH d AS (
  SELECT ${DELIVERY.id}, ${DELIVERY.tenantId} FROM ${TABLE.WebhookDelivery}
  WHERE ${DELIVERY.id} = $1::uuid AND ${DELIVERY.cycle} = $2::int AND ${DELIVERY.attemptCount} = $3::int - 1 AND ${DELIVERY.status} = 'pending'
), a AS (
  INSERT INTO ${TABLE.WebhookAttempt} (${ATTEMPT.id}, ${ATTEMPT.tenantId}, ${ATTEMPT.deliveryId}, ${ATTEMPT.cycle}, ${ATTEMPT.attemptNumber}, ${ATTEMPT.outcome}, ${ATTEMPT.statusCode}, ${ATTEMPT.durationMs}, ${ATTEMPT.responseBody}, ${ATTEMPT.error}, ${ATTEMPT.createdAt}, ${ATTEMPT.requestHeaders}, ${ATTEMPT.requestBody}, ${ATTEMPT.throttled}, ${ATTEMPT.possibleRepeat}, ${ATTEMPT.engine})
  SELECT $4::uuid, d.${DELIVERY.tenantId}, d.${DELIVERY.id}, $2::int, $3::int, $5::text, $6::int, $7::int, $8::text, $9::text, $10::timestamptz, $17::jsonb, $18::text, $19::boolean, $25::boolean, $26::text FROM d
  ON CONFLICT (${ATTEMPT.deliveryId}, ${ATTEMPT.cycle}, ${ATTEMPT.attemptNumber}) DO NOTHING
  RETURNING ${ATTEMPT.deliveryId}
), u AS (
  UPDATE ${TABLE.WebhookDelivery} w SET
    ${DELIVERY.status} = $11::text,
    ${DELIVERY.attemptCount} = $3::int,
    ${DELIVERY.nextAttemptAt} = CASE WHEN $12::int IS NULL THEN NULL ELSE now() + make_interval(secs => $12::int / 1000.0) END,
    ${DELIVERY.lockedUntil} = NULL,
    ${DELIVERY.attemptStartedAt} = NULL,
    ${DELIVERY.lastStatusCode} = $6::int,
    ${DELIVERY.responseBody} = $13::text,
    ${DELIVERY.deliveredAt} = CASE WHEN $11::text = 'delivered' THEN now() ELSE w.${DELIVERY.deliveredAt} END,
    ${DELIVERY.updatedAt} = now()
  FROM a WHERE w.${DELIVERY.id} = a.${ATTEMPT.deliveryId}
  RETURNING w.${DELIVERY.id}, w.${DELIVERY.tenantId}, w.${DELIVERY.status}, w.${DELIVERY.subscriptionId}
), h AS (
  -- Whether this failure disables the subscription (read before the update below changes the row;
  -- locked, so of two failures recorded at once only the first disables and audits). Only a
  -- failure can disable: a success takes no lock here.
  SELECT s.${SUBSCRIPTION.id}, ${disableNow} AS disable FROM ${TABLE.WebhookSubscription} s JOIN u ON s.${SUBSCRIPTION.id} = u.${DELIVERY.subscriptionId}
  WHERE $21::text = 'failure'
  FOR UPDATE OF s
), p AS (
  -- The endpoint's health, beside the delivery's: a consumer's Retry-After holds back the whole
  -- subscription (claims skip it until next_delivery_at, sends already claimed until held_until); the breaker counts failures ($21 'failure') and opens at $22 in a row, its next
  -- probe $23 ms after each failure; a success closes it. Failing without a success for $24 seconds
  -- disables the subscription (its deliveries keep waiting, in order, for it to be enabled again).
  -- A success on a healthy endpoint changes nothing but last_success_at, which it moves at most once
  -- a second: concurrent attempts to one endpoint do not queue on its row (throughput).
  UPDATE ${TABLE.WebhookSubscription} s SET
    ${SUBSCRIPTION.nextDeliveryAt} = CASE WHEN $20::int IS NULL THEN s.${SUBSCRIPTION.nextDeliveryAt}
      ELSE greatest(s.${SUBSCRIPTION.nextDeliveryAt}, now() + make_interval(secs => $20::int / 1000.0)) END,
    ${SUBSCRIPTION.heldUntil} = CASE WHEN $20::int IS NULL THEN s.${SUBSCRIPTION.heldUntil}
      ELSE greatest(s.${SUBSCRIPTION.heldUntil}, now() + make_interval(secs => $20::int / 1000.0)) END,
    ${SUBSCRIPTION.consecutiveFailures} = CASE $21::text WHEN 'success' THEN 0 WHEN 'failure' THEN s.${SUBSCRIPTION.consecutiveFailures} + 1
      ELSE s.${SUBSCRIPTION.consecutiveFailures} END,
    ${SUBSCRIPTION.breakerProbeAt} = CASE $21::text WHEN 'success' THEN NULL
      WHEN 'failure' THEN CASE WHEN s.${SUBSCRIPTION.consecutiveFailures} + 1 >= $22::int THEN clock_timestamp() + make_interval(secs => $23::int / 1000.0)
        ELSE s.${SUBSCRIPTION.breakerProbeAt} END
      ELSE s.${SUBSCRIPTION.breakerProbeAt} END,
    ${SUBSCRIPTION.failingSince} = CASE $21::text WHEN 'success' THEN NULL WHEN 'failure' THEN coalesce(s.${SUBSCRIPTION.failingSince}, now())
      ELSE s.${SUBSCRIPTION.failingSince} END,
    ${SUBSCRIPTION.lastSuccessAt} = CASE $21::text WHEN 'success' THEN now() ELSE s.${SUBSCRIPTION.lastSuccessAt} END,
    ${SUBSCRIPTION.enabled} = s.${SUBSCRIPTION.enabled} AND NOT coalesce(h.disable, false),
    ${SUBSCRIPTION.disabledReason} = CASE WHEN h.disable THEN '${DISABLED_FAILING}' ELSE s.${SUBSCRIPTION.disabledReason} END,
    ${SUBSCRIPTION.disabledAt} = CASE WHEN h.disable THEN now() ELSE s.${SUBSCRIPTION.disabledAt} END
  FROM u LEFT JOIN h ON h.${SUBSCRIPTION.id} = u.${DELIVERY.subscriptionId}
  WHERE s.${SUBSCRIPTION.id} = u.${DELIVERY.subscriptionId}
    AND ($20::int IS NOT NULL OR $21::text = 'failure' OR ($21::text = 'success' AND (s.${SUBSCRIPTION.consecutiveFailures} <> 0
      OR s.${SUBSCRIPTION.breakerProbeAt} IS NOT NULL OR s.${SUBSCRIPTION.failingSince} IS NOT NULL OR s.${SUBSCRIPTION.lastSuccessAt} IS NULL
      OR s.${SUBSCRIPTION.lastSuccessAt} < now() - interval '1 second')))
  RETURNING s.${SUBSCRIPTION.id}, s.${SUBSCRIPTION.tenantId}, s.${SUBSCRIPTION.targetUrl}, s.${SUBSCRIPTION.failingSince}, s.${SUBSCRIPTION.lastSuccessAt},
    coalesce(h.disable, false) AS just_disabled
), audit AS (
  INSERT INTO ${TABLE.AuditLog} (${AUDIT.id}, ${AUDIT.tenantId}, ${AUDIT.actorType}, ${AUDIT.actorId}, ${AUDIT.actorLabel}, ${AUDIT.action}, ${AUDIT.targetType}, ${AUDIT.targetId}, ${AUDIT.details}, ${AUDIT.createdAt})
  SELECT gen_random_uuid(), p.${SUBSCRIPTION.tenantId}, 'system', NULL, 'webhook delivery', 'webhook_subscription.auto_disabled', 'webhook_subscription', p.${SUBSCRIPTION.id}::text,
    jsonb_build_object('reason', '${DISABLED_FAILING}', 'url', p.${SUBSCRIPTION.targetUrl}, 'failing_since', p.${SUBSCRIPTION.failingSince},
      'last_success_at', p.${SUBSCRIPTION.lastSuccessAt}, 'disabled_after_seconds', $24::int), now()
  FROM p WHERE p.just_disabled
  RETURNING ${AUDIT.id}
), disabled_notice AS (
  INSERT INTO ${TABLE.Notification} (${NOTIFICATION.id}, ${NOTIFICATION.tenantId}, ${NOTIFICATION.kind}, ${NOTIFICATION.title}, ${NOTIFICATION.body}, ${NOTIFICATION.data}, ${NOTIFICATION.createdAt})
  SELECT gen_random_uuid(), p.${SUBSCRIPTION.tenantId}, 'webhook.disabled', 'Webhook endpoint disabled',
    'Deliveries to ' || p.${SUBSCRIPTION.targetUrl} || ' failed without a success since ' || to_char(p.${SUBSCRIPTION.failingSince} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')
      || '. Its undelivered events wait; enable the endpoint to resume.',
    jsonb_build_object('subscription_id', p.${SUBSCRIPTION.id}), now()
  FROM p WHERE p.just_disabled
  RETURNING ${NOTIFICATION.id}
), n AS (
  INSERT INTO ${TABLE.Notification} (${NOTIFICATION.id}, ${NOTIFICATION.tenantId}, ${NOTIFICATION.kind}, ${NOTIFICATION.title}, ${NOTIFICATION.body}, ${NOTIFICATION.data}, ${NOTIFICATION.createdAt})
  SELECT gen_random_uuid(), u.${DELIVERY.tenantId}, 'webhook.dead_letter', $14::text, $15::text, $16::jsonb, now() FROM u WHERE u.${DELIVERY.status} = 'dead_letter'
  RETURNING ${NOTIFICATION.id}
)
SELECT (SELECT count(*) FROM u)::int AS updated, (SELECT count(*) FROM n)::int AS notified, (SELECT count(*) FROM audit)::int AS disabled`;

/**
 * Successful attempts, many in one statement ($1: a JSON array of rows): the common case, recorded
 * in batches so a busy worker spends one round trip on many deliveries. The same guard as RECORD_SQL
 * (the delivery still at that cycle and attempt, the attempt row unique), and a success's effect on
 * the endpoint's health (breaker closed, failing_since cleared, last_success_at at most a second old).
 */
const RECORD_DELIVERED_SQL = `
WITH i AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS x(delivery_id uuid, cycle int, attempt_number int, attempt_id uuid, status_code int,
    duration_ms int, response_body text, created_at timestamptz, request_headers jsonb, request_body text, possible_repeat boolean, engine text)
), d AS (
  -- Each row's delivery by its primary key. As a plain join, the planner (guessing 100 rows from the
  -- function) hashed the batch and read every pending delivery of the table, per batch; OFFSET 0
  -- keeps the subquery from being flattened into such a join.
  SELECT w.${DELIVERY.id}, w.${DELIVERY.tenantId}, i.* FROM i CROSS JOIN LATERAL (
    SELECT w.${DELIVERY.id}, w.${DELIVERY.tenantId} FROM ${TABLE.WebhookDelivery} w
    WHERE w.${DELIVERY.id} = i.delivery_id AND w.${DELIVERY.cycle} = i.cycle AND w.${DELIVERY.attemptCount} = i.attempt_number - 1
      AND w.${DELIVERY.status} = 'pending'
    OFFSET 0
  ) w
), a AS (
  INSERT INTO ${TABLE.WebhookAttempt} (${ATTEMPT.id}, ${ATTEMPT.tenantId}, ${ATTEMPT.deliveryId}, ${ATTEMPT.cycle}, ${ATTEMPT.attemptNumber}, ${ATTEMPT.outcome}, ${ATTEMPT.statusCode}, ${ATTEMPT.durationMs}, ${ATTEMPT.responseBody}, ${ATTEMPT.error}, ${ATTEMPT.createdAt}, ${ATTEMPT.requestHeaders}, ${ATTEMPT.requestBody}, ${ATTEMPT.throttled}, ${ATTEMPT.possibleRepeat}, ${ATTEMPT.engine})
  SELECT d.attempt_id, d.${DELIVERY.tenantId}, d.${DELIVERY.id}, d.cycle, d.attempt_number, 'delivered', d.status_code, d.duration_ms, d.response_body, NULL, d.created_at,
    d.request_headers, d.request_body, false, d.possible_repeat, d.engine FROM d
  ON CONFLICT (${ATTEMPT.deliveryId}, ${ATTEMPT.cycle}, ${ATTEMPT.attemptNumber}) DO NOTHING
  RETURNING ${ATTEMPT.deliveryId}, ${ATTEMPT.attemptNumber}, ${ATTEMPT.statusCode}, ${ATTEMPT.responseBody}
), u AS (
  UPDATE ${TABLE.WebhookDelivery} w SET
    ${DELIVERY.status} = 'delivered',
    ${DELIVERY.attemptCount} = a.${ATTEMPT.attemptNumber},
    ${DELIVERY.nextAttemptAt} = NULL,
    ${DELIVERY.lockedUntil} = NULL,
    ${DELIVERY.attemptStartedAt} = NULL,
    ${DELIVERY.lastStatusCode} = a.${ATTEMPT.statusCode},
    ${DELIVERY.responseBody} = a.${ATTEMPT.responseBody},
    ${DELIVERY.deliveredAt} = now(),
    ${DELIVERY.updatedAt} = now()
  -- The ids as an array too: by primary key, not a scan of the table (the same guess as above).
  FROM a WHERE w.${DELIVERY.id} = a.${ATTEMPT.deliveryId} AND w.${DELIVERY.id} = ANY(ARRAY(SELECT a.${ATTEMPT.deliveryId} FROM a))
  RETURNING w.${DELIVERY.id}, w.${DELIVERY.subscriptionId}
), p AS (
  UPDATE ${TABLE.WebhookSubscription} s SET ${SUBSCRIPTION.consecutiveFailures} = 0, ${SUBSCRIPTION.breakerProbeAt} = NULL,
    ${SUBSCRIPTION.failingSince} = NULL, ${SUBSCRIPTION.lastSuccessAt} = now()
  FROM (SELECT DISTINCT ${DELIVERY.subscriptionId} FROM u) x
  WHERE s.${SUBSCRIPTION.id} = x.${DELIVERY.subscriptionId}
    AND (s.${SUBSCRIPTION.consecutiveFailures} <> 0 OR s.${SUBSCRIPTION.breakerProbeAt} IS NOT NULL OR s.${SUBSCRIPTION.failingSince} IS NOT NULL
      OR s.${SUBSCRIPTION.lastSuccessAt} IS NULL OR s.${SUBSCRIPTION.lastSuccessAt} < now() - interval '1 second')
  RETURNING s.${SUBSCRIPTION.id}
)
SELECT u.${DELIVERY.id}::text AS delivery_id FROM u`;

type DeliveredRow = {
  delivery_id: string;
  cycle: number;
  attempt_number: number;
  attempt_id: string;
  status_code: number | null;
  duration_ms: number;
  response_body: string | null;
  created_at: string;
  request_headers: Record<string, string> | null;
  request_body: string;
  possible_repeat: boolean;
  engine: AttemptEngine;
};

/** Most rows one batch records. */
const RECORD_BATCH_MAX = 200;

const RECORD_DELIVERED = { text: RECORD_DELIVERED_SQL };

/**
 * Group commit for successful attempts: the first one is written once the answers read in the same
 * turn of the event loop have joined it (setImmediate: the answers of many connections arrive
 * together under load, and each used to cost a statement of its own); those that finish while a
 * batch is being written go together in the next one. No timer: a lone attempt waits for nothing.
 * A prepared statement (planned once per connection), not the Prisma client: it runs for every
 * delivery, and its per-query work costs more than the statement.
 */
class DeliveredRecorder {
  constructor(private readonly sql: SqlRunner) {}

  private queue: { row: DeliveredRow; resolve: (recorded: boolean) => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  record(row: DeliveredRow): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (this.writing) return;
      this.writing = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush() {
    while (this.queue.length) {
      const batch = this.queue.splice(0, RECORD_BATCH_MAX);
      try {
        const rows = await this.sql<{ delivery_id: string }>(RECORD_DELIVERED, [JSON.stringify(batch.map((b) => b.row))]);
        const done = new Set(rows.map((r) => r.delivery_id));
        for (const b of batch) b.resolve(done.has(b.row.delivery_id));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.writing = false;
  }
}

const recorders = new WeakMap<SqlRunner, DeliveredRecorder>();
function deliveredRecorder(sql: SqlRunner): DeliveredRecorder {
  let r = recorders.get(sql);
  if (!r) recorders.set(sql, (r = new DeliveredRecorder(sql)));
  return r;
}

// Decrypting per attempt is wasted work at hundreds of deliveries a second; the ciphertext is the
// key, so a changed secret is simply a different entry. Bounded, and never logged.
const secretCache = new Map<string, string>();
function openSecret(ciphertext: string): string {
  let plain = secretCache.get(ciphertext);
  if (plain === undefined) {
    plain = decryptSecret(ciphertext);
    if (secretCache.size >= 1000) secretCache.clear();
    secretCache.set(ciphertext, plain);
  }
  return plain;
}

/**
 * Marks attempt $3 of cycle $2 started, before its POST (when the claim did not: the Inngest step),
 * unless its subscription is held (a consumer's Retry-After, recorded by any process): then it
 * marks nothing and says how long the hold has left (`held_ms`). `started`: whether the attempt had
 * been started already and not recorded (the consumer may have received it).
 */
const MARK_STARTED_SQL = `
WITH old AS (
  SELECT d.${DELIVERY.id}, d.${DELIVERY.attemptStartedAt} IS NOT NULL AS started,
    CASE WHEN s.${SUBSCRIPTION.heldUntil} > clock_timestamp() THEN ceil(extract(epoch FROM s.${SUBSCRIPTION.heldUntil} - clock_timestamp()) * 1000)::int ELSE 0 END AS held_ms
  FROM ${TABLE.WebhookDelivery} d JOIN ${TABLE.WebhookSubscription} s ON s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId}
  WHERE d.${DELIVERY.id} = $1::uuid AND d.${DELIVERY.cycle} = $2::int AND d.${DELIVERY.attemptCount} = $3::int - 1 AND d.${DELIVERY.status} = 'pending'
  FOR UPDATE OF d
), marked AS (
  UPDATE ${TABLE.WebhookDelivery} w SET ${DELIVERY.attemptStartedAt} = now() FROM old WHERE w.${DELIVERY.id} = old.${DELIVERY.id} AND old.held_ms = 0
  RETURNING w.${DELIVERY.id}
)
SELECT old.started, old.held_ms, (SELECT count(*) FROM marked)::int AS marked FROM old`;

async function markStarted(db: PrismaClient, target: DeliveryTarget, attemptNumber: number): Promise<{ started: boolean; heldMs: number }> {
  const rows = await db.$queryRawUnsafe<{ started: boolean; held_ms: number }[]>(MARK_STARTED_SQL, target.delivery_id, target.cycle, attemptNumber);
  return { started: rows[0]?.started ?? false, heldMs: rows[0]?.held_ms ?? 0 };
}

/** Without a lease to respect (the Inngest step), how long recording an attempt keeps trying. */
const DEFAULT_RECORD_WINDOW_MS = 20_000;

/**
 * Runs `write` again, with backoff, while the database is unreachable and `recordBy` (epoch ms)
 * has not passed: an attempt already sent must be recorded, or it is sent again after its lease.
 * Safe to repeat: RECORD_SQL changes nothing once the attempt is recorded.
 */
async function retryWhileUnreachable<T>(write: () => Promise<T>, recordBy: number): Promise<{ value: T; tries: number }> {
  for (let tries = 1, delay = 100; ; tries++, delay = Math.min(delay * 2, 2_000)) {
    try {
      return { value: await write(), tries };
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() + delay > recordBy) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

type AttemptOptions = {
  recordBy?: number;
  onWritten?: () => void;
  /** Called once the consumer answered with a success, before the attempt is recorded. */
  onSucceeded?: () => void;
  engine?: AttemptEngine;
  /** The prepared-statement runner successes are recorded with (default: the process's). */
  sql?: SqlRunner;
};

/**
 * Sends attempt `attempt_count + 1` of the target's cycle and records it. `recordBy`: until when
 * (epoch ms) recording may be retried through a database outage (the worker: before its lease ends).
 */
export function attemptDelivery(db: PrismaClient, target: DeliveryTarget, opts: AttemptOptions = {}): Promise<AttemptResult> {
  // Every line it logs carries its delivery and event ids (and the request that caused the event);
  // with tracing on it is a span in the trace of that request (observability/tracing.ts).
  const eventId = eventWireId(target.event_id); // as the consumer sees it (`webhook-id`)
  const fields = { delivery_id: target.delivery_id, event_id: eventId, event_request_id: target.event_request_id ?? undefined };
  // Tracing off (the default): no span's attributes, closure and promise per attempt.
  if (!tracingEnabled()) return withLogFields(fields, () => attemptAndRecord(db, target, opts));
  return withLogFields(fields, () =>
    traceClientCall(
      "webhook attempt",
      {
        "webhook.delivery_id": target.delivery_id,
        "webhook.event_id": eventId,
        "webhook.event_type": target.event_type,
        "webhook.attempt": target.attempt_count + 1,
        "http.request.method": "POST",
        "tenant.id": target.tenant_id,
      },
      () => attemptAndRecord(db, target, opts),
      {
        parentTraceParent: target.event_trace_parent,
        finish: (result, span) => {
          if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
          span.setAttribute("webhook.outcome", result.outcome);
        },
      },
    ),
  );
}

async function attemptAndRecord(db: PrismaClient, target: DeliveryTarget, opts: AttemptOptions): Promise<AttemptResult> {
  const attemptNumber = target.attempt_count + 1;
  const envelope = toEnvelope({
    id: target.event_id,
    type: target.event_type,
    createdAt: new Date(target.event_created_at),
    tenantId: target.tenant_id,
    data: typeof target.event_data === "string" ? JSON.parse(target.event_data) : target.event_data,
  });
  const body = JSON.stringify(envelope);
  // Recorded as started before the POST: a run that dies before recording it leaves the mark, and the
  // next run of this attempt says it may be a repeat (on the attempt row and in a header).
  let possibleRepeat = target.possible_repeat;
  if (possibleRepeat === undefined) {
    // Held (a 429 answered in this process, or recorded by any): nothing is sent, nothing recorded;
    // the caller tries again once the hold is over.
    const heldHere = heldFor(target.subscription_id);
    const mark = heldHere > 0 ? { started: false, heldMs: heldHere } : await markStarted(db, target, attemptNumber);
    if (mark.heldMs > 0) {
      return {
        attemptNumber,
        outcome: "retry",
        status: "pending",
        statusCode: null,
        nextDelayMs: null,
        throttled: false,
        recorded: false,
        heldMs: mark.heldMs,
      };
    }
    possibleRepeat = mark.started;
  }
  const startedAt = new Date();
  let sent: SendResult;
  try {
    sent = await sendWebhook({
      url: target.target_url,
      secret: openSecret(target.secret_encrypted),
      previousSecret: target.previous_secret_encrypted ? openSecret(target.previous_secret_encrypted) : null,
      body,
      eventId: envelope.id,
      eventType: envelope.event,
      timeoutMs: attemptTimeoutMs(),
      onWritten: opts.onWritten,
      possibleRepeat,
    });
  } catch (err) {
    // Only a broken secret can get here (sendWebhook itself never throws): record it, never leak it.
    sent = {
      attemptId: crypto.randomUUID(),
      statusCode: null,
      durationMs: 0,
      responseBody: null,
      error: `cannot sign: ${(err as Error).name}`,
      requestHeaders: null,
    };
  }
  // A target the rules refuse stays refused on every rung (the URL or the setting must change): the
  // delivery fails at once with the reason, and is resent with a replay once fixed.
  const next: AttemptPlan = sent.refused
    ? { status: "permanent_fail", nextDelayMs: null, outcome: "permanent_fail", throttled: false, pauseMs: null }
    : planNext(attemptNumber, target.throttled_count ?? 0, { statusCode: sent.statusCode, retryAfterMs: parseRetryAfter(sent.retryAfter) });
  const outcome = next.outcome;
  // This process's sends already claimed for the subscription wait from now (not from the record).
  if (next.pauseMs !== null) holdSubscription(target.subscription_id, next.pauseMs);
  const lastText = truncateBody(sent.error ?? sent.responseBody);
  const recordBy = opts.recordBy ?? Date.now() + DEFAULT_RECORD_WINDOW_MS;
  const record = () =>
    db.$queryRawUnsafe<{ updated: number; notified: number; disabled: number }[]>(
      RECORD_SQL,
      target.delivery_id,
      target.cycle,
      attemptNumber,
      sent.attemptId,
      outcome,
      sent.statusCode,
      sent.durationMs,
      truncateBody(sent.responseBody),
      sent.error,
      startedAt.toISOString(),
      next.status,
      next.nextDelayMs,
      lastText,
      "Webhook delivery dead-lettered",
      `${envelope.event} (${envelope.id}) to ${target.target_url} failed ${attemptNumber} times; last error: ${lastText ?? "none"}`.slice(0, 4000),
      JSON.stringify({ delivery_id: target.delivery_id, subscription_id: target.subscription_id, event_id: envelope.id, cycle: target.cycle }),
      // What was sent, for the endpoint page (the body bounded like the column).
      sent.requestHeaders ? JSON.stringify(sent.requestHeaders) : null,
      body.slice(0, REQUEST_BODY_LIMIT),
      next.throttled,
      next.pauseMs,
      // What the attempt says of the endpoint's health: an honoured 429 says nothing.
      outcome === "delivered" ? "success" : next.throttled ? "none" : "failure",
      setting("WEBHOOK_BREAKER_FAILURES"),
      setting("WEBHOOK_BREAKER_PROBE_INTERVAL_MS"),
      setting("WEBHOOK_AUTO_DISABLE_AFTER_SECONDS"),
      possibleRepeat,
      opts.engine ?? "embedded",
    );
  let recorded: boolean | undefined;
  if (next.status === "delivered") {
    opts.onSucceeded?.();
    // The common case, batched; a failed batch falls back to the statement below (which retries through an outage).
    recorded = await deliveredRecorder(opts.sql ?? sqlIfOpen() ?? (await getSql()))
      .record({
        delivery_id: target.delivery_id,
        cycle: target.cycle,
        attempt_number: attemptNumber,
        attempt_id: sent.attemptId,
        status_code: sent.statusCode,
        duration_ms: sent.durationMs,
        response_body: truncateBody(sent.responseBody),
        created_at: startedAt.toISOString(),
        request_headers: sent.requestHeaders,
        request_body: body.slice(0, REQUEST_BODY_LIMIT),
        possible_repeat: possibleRepeat,
        engine: opts.engine ?? "embedded",
      })
      .catch(() => undefined);
  }
  if (recorded === undefined) {
    try {
      const { value: rows, tries } = await retryWhileUnreachable(record, recordBy);
      if (rows[0]?.disabled) {
        log.warn(
          {
            tenant_id: target.tenant_id,
            subscription_id: target.subscription_id,
          },
          "webhook subscription disabled: failing without a success for the auto-disable period",
        );
      }
      // A retry after a try whose commit was lost in the outage finds the attempt already there.
      recorded = rows[0]?.updated === 1 || (tries > 1 && (await retryWhileUnreachable(() => attemptRowExists(db, sent.attemptId), recordBy)).value);
    } catch (err) {
      log.error(
        {
          tenant_id: target.tenant_id,
          delivery_id: target.delivery_id,
          event_id: envelope.id,
          attempt: attemptNumber,
          error: err,
        },
        "webhook attempt sent but not recorded; it will be sent again after its lease",
      );
      throw err;
    }
  }
  if (recorded && next.status === "dead_letter") {
    log.warn(
      {
        tenant_id: target.tenant_id,
        delivery_id: target.delivery_id,
        subscription_id: target.subscription_id,
        event_id: envelope.id,
        cycle: target.cycle,
        last_error: lastText,
      },
      "webhook delivery dead-lettered",
    );
  }
  recordWebhookAttempt(outcome, next.status, sent.durationMs, recorded);
  return { attemptNumber, outcome, status: next.status, statusCode: sent.statusCode, nextDelayMs: next.nextDelayMs, throttled: next.throttled, recorded };
}

const ATTEMPT_EXISTS_SQL = `SELECT 1 FROM ${TABLE.WebhookAttempt} WHERE ${ATTEMPT.id} = $1::uuid`;

async function attemptRowExists(db: PrismaClient, attemptId: string): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<unknown[]>(ATTEMPT_EXISTS_SQL, attemptId);
  return rows.length > 0;
}

/** The delivery with its subscription and event, by id (the Inngest engine's step input). */
const LOAD_TARGET_SQL = `SELECT ${TARGET_COLUMNS} FROM ${TABLE.WebhookDelivery} d
       JOIN ${TABLE.WebhookSubscription} s ON s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId}
       JOIN ${TABLE.Event} e ON e.${EVENT.id} = d.${DELIVERY.eventId}
     WHERE d.${DELIVERY.id} = $1::uuid`;

export async function loadDeliveryTarget(db: PrismaClient, deliveryId: string): Promise<DeliveryTarget | null> {
  const rows = await db.$queryRawUnsafe<DeliveryTarget[]>(LOAD_TARGET_SQL, deliveryId);
  return rows[0] ?? null;
}
