import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { MAX_URL_LENGTH, uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";
import { EVENT_TYPES, eventWireId, TEST_EVENT_TYPE, type EventType } from "../events/catalog";

/** Outbound rate limit of a subscription, in deliveries (attempts) per second. */
export const MAX_DELIVERIES_PER_SECOND = { min: 1, max: 1000, default: 50 } as const;
const rateDescription =
  `At most this many deliveries a second go to the URL (${MAX_DELIVERIES_PER_SECOND.min}..${MAX_DELIVERIES_PER_SECOND.max}, ` +
  `default ${MAX_DELIVERIES_PER_SECOND.default}); deliveries above it wait their turn in order, they do not fail`;

const DELIVERY_STATUSES = ["pending", "delivered", "permanent_fail", "dead_letter"] as const;

/**
 * What the dashboard shows: `pending` has not been tried yet in its cycle, `retrying` failed at
 * least once and waits for its next attempt, `failed` got a status that is never retried,
 * `dead_lettered` used up its ladder.
 */
export const DELIVERY_STATES = ["pending", "retrying", "delivered", "failed", "dead_lettered"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** The first characters of a sent body that an attempt keeps (its column's size). */
export const REQUEST_BODY_LIMIT = 4096;

const column = resourceFields<Prisma.WebhookSubscriptionGetPayload<object>>();
const patch = { patch: true } as const;

/** The webhook subscription, declared once: wire schema, row mapping and patchable columns. */
export const subscriptionResource = column.define("WebhookSubscription", {
  id: column.value("id", z.uuid()),
  url: column.value("targetUrl", z.string().describe("HTTPS endpoint that receives the POSTs"), patch),
  description: column.value("description", z.string().nullable(), patch),
  events: column.value("events", z.array(z.enum(EVENT_TYPES as [EventType, ...EventType[]])), patch),
  enabled: column.value(
    "enabled",
    z.boolean().describe("A disabled subscription gets no new deliveries; its pending ones wait until it is enabled again"),
    patch,
  ),
  max_deliveries_per_second: column.value("maxDeliveriesPerSecond", z.number().int().describe(rateDescription), patch),
  secret_prefix: column.value("secretPrefix", z.string().describe("The first 12 characters of the signing secret")),
  previous_secret_expires_at: column.computed(
    z.string().nullable().describe("After a secret roll: until when the replaced secret still signs deliveries beside the new one; null otherwise"),
    // A replaced secret that no longer signs is not worth mentioning.
    (s) => (s.previousSecretExpiresAt && s.previousSecretExpiresAt > new Date() ? s.previousSecretExpiresAt.toISOString() : null),
  ),
  disabled_reason: column.value(
    "disabledReason",
    z
      .enum(["endpoint_failing"])
      .nullable()
      .describe(
        "Why the platform disabled it: `endpoint_failing`, no successful attempt for the auto-disable period (5 days by default); null when enabled or disabled by a person. Its undelivered events wait and are sent, in order, once it is enabled again",
      ),
  ),
  disabled_at: column.timestamp("disabledAt", z.string().nullable().describe("When the platform disabled it (with `disabled_reason`)")),
  circuit: column.computed(
    z
      .enum(["closed", "open"])
      .describe(
        "`open`: its last attempts failed in a row, so only a probe is sent now and then (held deliveries keep their place and attempts) until one succeeds",
      ),
    (s) => (s.breakerProbeAt ? "open" : "closed"),
  ),
  failing_since: column.timestamp(
    "failingSince",
    z.string().nullable().describe("The first failed attempt since the last success; null when the last attempt succeeded"),
  ),
  last_success_at: column.timestamp("lastSuccessAt", z.string().nullable()),
  created_at: column.timestamp("createdAt", z.string()),
  updated_at: column.timestamp("updatedAt", z.string()),
});
export const subscriptionSchema = subscriptionResource.schema;

export const createdSubscriptionSchema = subscriptionSchema.extend({
  secret: z.string().describe("`whsec_` + 48 hex characters; shown only in this response"),
});

/** Rolling a secret: the new secret is shown once; the old one keeps signing for the overlap. */
export const rollSecretInput = z.strictObject(
  {
    id: uuid().describe("Subscription id"),
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .optional()
      .describe("How long the replaced secret keeps signing beside the new one (default 24 hours; 0 ends it at once)"),
  },
  unknownFieldMessage(),
);

/** The dashboard's name for a delivery's status (a pending one that failed before is `retrying`). */
export function deliveryState(d: { status: string; attemptCount: number }): DeliveryState {
  if (d.status === "pending") return d.attemptCount > 0 ? "retrying" : "pending";
  if (d.status === "permanent_fail") return "failed";
  if (d.status === "dead_letter") return "dead_lettered";
  return "delivered";
}

const headersOf = (value: unknown): Record<string, string> | null =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, string>) : null;

const attemptColumn = resourceFields<Prisma.WebhookAttemptGetPayload<object>>();
const attemptResource = attemptColumn.define(null, {
  id: attemptColumn.value("id", z.uuid().describe("Sent as `x-delivery-id`")),
  cycle: attemptColumn.value("cycle", z.number().int()),
  attempt_number: attemptColumn.value("attemptNumber", z.number().int()),
  outcome: attemptColumn.value("outcome", z.enum(["delivered", "permanent_fail", "retry"])),
  status_code: attemptColumn.value("statusCode", z.number().int().nullable()),
  duration_ms: attemptColumn.value("durationMs", z.number().int()),
  response_body: attemptColumn.value("responseBody", z.string().nullable().describe("The response body's first 2048 characters")),
  error: attemptColumn.value(
    "error",
    z
      .string()
      .nullable()
      .describe(
        "Why the attempt got no answer: `timeout: …`, `network error: …`, or `refused target: …` with the reason (the target rules refused the URL or the address it resolved to; such a delivery fails at once, see the delivery log)",
      ),
  ),
  possible_repeat: attemptColumn.value(
    "possibleRepeat",
    z
      .boolean()
      .describe(
        "This attempt resumed one that a stopped worker had started and not recorded: the endpoint may have received the event already (sent with `webhook-possible-repeat: true`; de-duplicate on `webhook-id`)",
      ),
  ),
  request_headers: attemptColumn.computed(
    z.record(z.string(), z.string()).nullable().describe("The headers sent; null when nothing was sent or for older attempts"),
    (row) => headersOf(row.requestHeaders),
  ),
  request_body: attemptColumn.value("requestBody", z.string().nullable().describe(`The body sent, its first ${REQUEST_BODY_LIMIT} characters`)),
  engine: attemptColumn.value(
    "engine",
    z
      .enum(["embedded", "inngest"])
      .nullable()
      .describe("The engine that made the attempt (the embedded worker or Inngest); null for attempts made before it was kept"),
  ),
  created_at: attemptColumn.timestamp("createdAt", z.string()),
});
const attemptSchema = attemptResource.schema;

/** A delivery row with what its wire shape shows of its event and attempts. */
export type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: { event: { select: { type: true } }; attempts: true } }>;
const deliveryColumn = resourceFields<DeliveryRow>();
export const deliveryResource = deliveryColumn.define("WebhookDelivery", {
  id: deliveryColumn.value("id", z.uuid()),
  subscription_id: deliveryColumn.value("subscriptionId", z.uuid()),
  event_id: deliveryColumn.computed(z.string().describe("`evt_<uuid>`"), (row) => eventWireId(row.eventId)),
  event_type: deliveryColumn.computed(z.string(), (row) => row.event.type),
  status: deliveryColumn.value("status", z.enum(DELIVERY_STATUSES)),
  state: deliveryColumn.computed(
    z.enum(DELIVERY_STATES).describe("`status` as the dashboard shows it (`pending` splits into `pending` and `retrying`)"),
    deliveryState,
  ),
  cycle: deliveryColumn.value("cycle", z.number().int().describe("1 for the first ladder; each replay starts the next")),
  attempt_count: deliveryColumn.value("attemptCount", z.number().int().describe("Attempts made in the current cycle")),
  next_attempt_at: deliveryColumn.computed(z.string().nullable(), (row) =>
    row.status === "pending" && row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
  ),
  last_status_code: deliveryColumn.value("lastStatusCode", z.number().int().nullable()),
  response_body: deliveryColumn.value("responseBody", z.string().nullable().describe("Last response body or error text (at most 2048 characters)")),
  delivered_at: deliveryColumn.timestamp("deliveredAt", z.string().nullable()),
  created_at: deliveryColumn.timestamp("createdAt", z.string()),
  updated_at: deliveryColumn.timestamp("updatedAt", z.string()),
  attempts: deliveryColumn.computed(z.array(attemptSchema).describe("Every attempt of every cycle, oldest first"), (row) =>
    [...row.attempts].sort((a, b) => a.cycle - b.cycle || a.attemptNumber - b.attemptNumber).map((a) => attemptResource.toWire(a)),
  ),
});
export const deliverySchema = deliveryResource.schema;

const notificationColumn = resourceFields<Prisma.NotificationGetPayload<object>>();
export const notificationResource = notificationColumn.define(null, {
  id: notificationColumn.value("id", z.uuid()),
  kind: notificationColumn.value("kind", z.string()),
  title: notificationColumn.value("title", z.string()),
  body: notificationColumn.value("body", z.string()),
  data: notificationColumn.json("data", z.record(z.string(), z.unknown())),
  read_at: notificationColumn.timestamp("readAt", z.string().nullable()),
  created_at: notificationColumn.timestamp("createdAt", z.string()),
});
export const notificationSchema = notificationResource.schema;

const eventName = z.enum(EVENT_TYPES as [EventType, ...EventType[]], { message: `must be one of: ${EVENT_TYPES.join(", ")}` });
const fields = {
  url: z.string().min(1).max(MAX_URL_LENGTH),
  events: z
    .array(eventName)
    .min(1, { message: "must list at least one event" })
    .refine((list) => new Set(list).size === list.length, { message: "must not repeat an event" }),
  description: z.string().max(500).nullable(),
  enabled: z.boolean(),
  max_deliveries_per_second: z
    .number({ message: "must be a whole number" })
    .int({ message: "must be a whole number" })
    .min(MAX_DELIVERIES_PER_SECOND.min, { message: `must be at least ${MAX_DELIVERIES_PER_SECOND.min}` })
    .max(MAX_DELIVERIES_PER_SECOND.max, { message: `must be at most ${MAX_DELIVERIES_PER_SECOND.max}` })
    .describe(rateDescription),
};

export const createSubscriptionInput = z.strictObject(
  {
    url: fields.url,
    events: fields.events,
    description: fields.description.optional(),
    enabled: fields.enabled.optional(),
    max_deliveries_per_second: fields.max_deliveries_per_second.optional(),
  },
  unknownFieldMessage(),
);

/** What an update may change (and what its audit entry compares). */
export const UPDATABLE_SUBSCRIPTION_FIELDS = ["url", "events", "description", "enabled", "max_deliveries_per_second"] as const;

export const updateSubscriptionInput = z
  .strictObject(
    {
      id: uuid(),
      url: fields.url.optional(),
      events: fields.events.optional(),
      description: fields.description.optional(),
      enabled: fields.enabled.optional(),
      max_deliveries_per_second: fields.max_deliveries_per_second.optional(),
    },
    unknownFieldMessage(new Set(["secret", "secret_prefix"])),
  )
  .refine((b) => UPDATABLE_SUBSCRIPTION_FIELDS.some((k) => k in b), {
    message: "request body must contain at least one updatable field",
  });

export const idInput = z.object({ id: uuid() });
export const listSubscriptionsInput = z.object(pageQuery);
/** What a delivery can carry: a catalog event or the dashboard's test event. */
const DELIVERED_EVENT_TYPES = [...EVENT_TYPES, TEST_EVENT_TYPE] as const;
const deliveredEventType = z.enum(DELIVERED_EVENT_TYPES as unknown as [string, ...string[]], {
  message: `must be one of: ${DELIVERED_EVENT_TYPES.join(", ")}`,
});

export const listDeliveriesInput = z.object({
  ...pageQuery,
  subscription_id: uuid().optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  state: z.enum(DELIVERY_STATES, { message: `must be one of: ${DELIVERY_STATES.join(", ")}` }).optional(),
  event_type: deliveredEventType.optional(),
});

/** One subscription with how many of its deliveries still wait (the delete dialog warns about them). */
export const subscriptionDetailSchema = subscriptionSchema.extend({
  pending_deliveries: z.number().int().describe("Deliveries not yet delivered, failed or dead-lettered (deleting drops them)"),
});
export const sendTestEventInput = z.object({ subscription_id: uuid() });
export const listNotificationsInput = z.object({ ...pageQuery, unread_only: z.boolean().optional() });

export const subscriptionListSchema = listEnvelope(subscriptionSchema, "WebhookSubscriptionList");
export const deliveryListSchema = listEnvelope(deliverySchema, "WebhookDeliveryList");
export const notificationListSchema = listEnvelope(notificationSchema, "NotificationList");

export type Subscription = z.infer<typeof subscriptionSchema>;
export type Delivery = z.infer<typeof deliverySchema>;
export type CreateSubscriptionInput = z.infer<typeof createSubscriptionInput>;
export type UpdateSubscriptionInput = z.infer<typeof updateSubscriptionInput>;
