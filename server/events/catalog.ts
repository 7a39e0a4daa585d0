// The event catalog: the 20 event names, the zod schema of each event's `data`, and the envelope
// every webhook carries. Each domain declares the events it emits (`<domain>.events.ts`), and
// checks the payload against that schema when it emits, so what is documented here is what
// consumers receive. This module only gathers them, in the documented order.
import { z } from "zod";
import { LEAD_EVENTS } from "../leads/leads.events";
import { CONVERSATION_EVENTS } from "../conversations/conversations.events";
import { APPOINTMENT_EVENTS } from "../appointments/appointments.events";
import { OFFERING_EVENTS } from "../offerings/offerings.events";
import { CALL_EVENTS } from "../calls/calls.events";
import { CSAT_EVENTS } from "../csat/csat.events";
import { ERASURE_EVENTS } from "../erasure/erasure.events";
import { TEST_EVENT_TYPE } from "../outbox/event-payloads";

export { TEST_EVENT_TYPE };

const iso = () => z.string().describe("ISO 8601 date-time");

/** The `data` schema of each event, by name. Top-level keys are strict: every key is documented. */
export const EVENT_PAYLOADS = {
  "lead.created": LEAD_EVENTS["lead.created"],
  "lead.updated": LEAD_EVENTS["lead.updated"],
  "lead.qualified": LEAD_EVENTS["lead.qualified"],
  "conversation.created": CONVERSATION_EVENTS["conversation.created"],
  "conversation.handoff_requested": LEAD_EVENTS["conversation.handoff_requested"],
  "conversation.closed": CONVERSATION_EVENTS["conversation.closed"],
  ...APPOINTMENT_EVENTS,
  ...OFFERING_EVENTS,
  ...CALL_EVENTS,
  "outbound.sent": CONVERSATION_EVENTS["outbound.sent"],
  "outbound.failed": CONVERSATION_EVENTS["outbound.failed"],
  "sla.breached": CONVERSATION_EVENTS["sla.breached"],
  ...CSAT_EVENTS,
  ...ERASURE_EVENTS,
} as const;

export type EventType = keyof typeof EVENT_PAYLOADS;
export const EVENT_TYPES = Object.keys(EVENT_PAYLOADS) as EventType[];

export const eventEnvelopeSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^evt_[0-9a-f-]{36}$/)
      .describe("`evt_<uuid>`; the consumer's idempotency key"),
    event: z.enum(EVENT_TYPES as [EventType, ...EventType[]]),
    created_at: iso(),
    tenant_id: z.uuid(),
    data: z.record(z.string(), z.unknown()).describe("The event's payload (see the catalog)"),
  })
  .meta({ id: "EventEnvelope" });

export type EventEnvelope = { id: string; event: string; created_at: string; tenant_id: string; data: unknown };

export const eventWireId = (id: string) => `evt_${id}`;

/** The envelope of a stored event row. Its JSON text is exactly what is signed and sent. */
export function toEnvelope(row: { id: string; type: string; createdAt: Date; tenantId: string; data: unknown }): EventEnvelope {
  return { id: eventWireId(row.id), event: row.type, created_at: row.createdAt.toISOString(), tenant_id: row.tenantId, data: row.data };
}

export const FIRES_WHEN: Record<EventType, string> = {
  "lead.created": "a lead is created (agent or `POST /leads`)",
  "lead.updated": "a lead changes (`PATCH /leads/{id}`)",
  "lead.qualified": "a lead's status leaves `new` (once); `data.messages` holds the conversation's last 10 messages, oldest first",
  "conversation.created": "`POST /conversations` creates a new (channel, customer) pair",
  "conversation.handoff_requested": "a handoff to a human is requested (`POST /leads/{id}/handoff`); carries the lead and the reason",
  "conversation.closed": "a conversation is closed (`PATCH /conversations/{id}` with status `closed`)",
  "booking.created": "an appointment is booked (`POST /appointments`)",
  "booking.rescheduled": "`scheduled_start` or `scheduled_end` changes; `previous_attributes` has the old values",
  "booking.cancelled": "an appointment's status becomes `cancelled`",
  "booking.completed": "an appointment's status becomes `completed`",
  "offering.created": "an offering is created (`POST /offerings`)",
  "offering.updated": "an offering is updated (`PATCH /offerings/{id}`)",
  "call.started": "a voice call starts",
  "call.completed": "a voice call ends after being answered",
  "call.missed": "a voice call ends unanswered",
  "outbound.sent": "an outbound message is accepted by its channel (`POST /conversations/{id}/send`)",
  "outbound.failed": "an outbound message fails at its channel",
  "sla.breached":
    "a conversation in `handoff` has waited longer than the tenant's `handoff_sla_minutes` (default 15) since the handoff began without an operator message; once per handoff",
  "csat.received": "a customer's satisfaction answer is recorded (the assistant's `record_csat` tool)",
  "customer.erased": "a customer's personal data is erased (`POST /privacy/erasures`, the dashboard or the CLI); erase your copies of the records it names",
};

const DATA_SHAPE: Record<EventType, string> = {
  "lead.created": "`{ object: Lead }`",
  "lead.updated": "`{ object: Lead, previous_attributes }`",
  "lead.qualified": "`{ object: Lead, previous_attributes, messages: Message[] }`",
  "conversation.created": "`{ object: Conversation }`",
  "conversation.handoff_requested": "`{ object: Conversation, previous_attributes, lead: Lead, reason }`",
  "conversation.closed": "`{ object: Conversation, previous_attributes }`",
  "booking.created": "`{ object: Appointment }`",
  "booking.rescheduled": "`{ object: Appointment, previous_attributes }`",
  "booking.cancelled": "`{ object: Appointment, previous_attributes }`",
  "booking.completed": "`{ object: Appointment, previous_attributes }`",
  "offering.created": "`{ object: Offering }`",
  "offering.updated": "`{ object: Offering, previous_attributes }`",
  "call.started": "`{ object: Call }`",
  "call.completed": "`{ object: Call, previous_attributes }`",
  "call.missed": "`{ object: Call }`",
  "outbound.sent": "`{ object: Message, conversation: Conversation, driver, provider_message_id }`",
  "outbound.failed": "`{ object: Message, conversation: Conversation, driver, error }`",
  "sla.breached": "`{ object: Conversation, waited_seconds, sla_minutes }`",
  "csat.received": "`{ object: CsatResponse }`",
  "customer.erased": "`{ object: { conversation_ids, message_ids, call_ids, lead_ids, appointment_ids, csat_response_ids } }`",
};

/** Events and webhooks, for the OpenAPI document's description and the README. */
export const EVENTS_MARKDOWN = `## Events and webhooks

A tenant registers webhook subscriptions (URL + event names) in the dashboard. Each event is written in the same database transaction as the change that caused it, and POSTed as JSON to every enabled subscription of the tenant that lists its name.

Envelope: \`{ "id": "evt_<uuid>", "event": "<name>", "created_at": "<ISO 8601 UTC>", "tenant_id": "<uuid>", "data": { ... } }\`. \`data\` is Stripe-like: \`object\` is the resource after the change, \`previous_attributes\` the old values of the fields that changed. The same event may arrive more than once: deduplicate on \`id\`.

| Event | Fires when | \`data\` |
|---|---|---|
${EVENT_TYPES.map((t) => `| \`${t}\` | ${FIRES_WHEN[t]} | ${DATA_SHAPE[t]} |`).join("\n")}

The dashboard's "send test event" sends \`${TEST_EVENT_TYPE}\` (\`{ object: { subscription_id, message } }\`) to that one subscription only.

**Headers** (lowercase): \`content-type: application/json\`; \`x-webhook-signature\`: lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the UTF-8 bytes of the whole secret (\`whsec_\` + 48 hex); \`x-event-type\`: the event name; \`x-delivery-id\`: a new uuid per attempt. Standard Webhooks headers too: \`webhook-id\` (the event id), \`webhook-timestamp\` (Unix seconds), \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">\`), keyed as the Standard Webhooks specification prescribes (the base64 decoding of the part after \`whsec_\`), so a stock verifier accepts it: \`new Webhook(secret)\` from the \`standardwebhooks\` package, no options. Verify over the exact raw bytes: re-serialized JSON does not verify. Answer a failed verification with a 4xx.

**Retries**: attempt 1 immediately, then 60 s, 5 min, 30 min, 2 h and 12 h after the previous failure; after the 6th failure the delivery is dead-lettered (the tenant's owners and admins are notified). Each attempt times out after 10 s. 2xx = delivered; 4xx (and any other non-2xx, non-5xx status, e.g. a redirect, which is never followed) = permanent failure, no retry; 5xx, timeout or network error = retried. A dead-lettered delivery can be replayed from the dashboard: a new cycle of 6 attempts.

**Targets**: \`https\` only; a URL whose host is or resolves to a loopback, private, link-local, CGNAT, multicast or cloud-metadata address is refused when the subscription is saved and again before every attempt.`;
