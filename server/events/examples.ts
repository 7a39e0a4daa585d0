// One example envelope per event type, for the OpenAPI document's `webhooks`. Built from the
// domains' resource examples; a test validates each against the event catalog's schemas.
import { EXAMPLE_LATER, EXAMPLE_TENANT_ID, EXAMPLE_TIME } from "../api/examples";
import { appointmentExample } from "../appointments/appointments.examples";
import { conversationExample, messageExample } from "../conversations/conversations.examples";
import { leadExample, qualifiedLeadExample } from "../leads/leads.examples";
import { offeringExample } from "../offerings/offerings.examples";
import type { EventEnvelope, EventType } from "./catalog";

const call = {
  id: "c4a1e2b3-d5f6-4a7b-8c9d-0e1f2a3b4c5d",
  conversation_id: conversationExample.id,
  direction: "inbound",
  from: "+971501234567",
  to: "+97143001234",
  status: "in_progress",
  started_at: EXAMPLE_TIME,
  ended_at: null,
  duration_seconds: null,
};
const voice = { ...conversationExample, channel: "voice" };
const handoff = { ...conversationExample, status: "handoff", updated_at: EXAMPLE_LATER };
const sent = { ...messageExample, status: "sent" };

const DATA: Record<EventType, Record<string, unknown>> = {
  "lead.created": { object: leadExample },
  "lead.updated": { object: { ...leadExample, notes: "Prefers a high floor", updated_at: EXAMPLE_LATER }, previous_attributes: { notes: null } },
  "lead.qualified": {
    object: qualifiedLeadExample,
    previous_attributes: { status: "new", qualified_at: null },
    messages: [{ ...sent, direction: "inbound", author: "customer", status: "received", body: "Is the Marina apartment still available?" }],
  },
  "conversation.created": { object: conversationExample },
  "conversation.handoff_requested": {
    object: handoff,
    previous_attributes: { status: "open" },
    lead: { ...leadExample, handoff_requested_at: EXAMPLE_LATER },
    reason: "Wants to negotiate the price with an agent",
  },
  "conversation.closed": { object: { ...conversationExample, status: "closed", closed_at: EXAMPLE_LATER }, previous_attributes: { status: "open", closed_at: null } },
  "booking.created": { object: appointmentExample },
  "booking.rescheduled": {
    object: { ...appointmentExample, scheduled_start: "2026-11-25T10:00:00.000Z", scheduled_end: "2026-11-25T10:30:00.000Z" },
    previous_attributes: { scheduled_start: appointmentExample.scheduled_start, scheduled_end: appointmentExample.scheduled_end },
  },
  "booking.cancelled": { object: { ...appointmentExample, status: "cancelled" }, previous_attributes: { status: "confirmed" } },
  "booking.completed": { object: { ...appointmentExample, status: "completed" }, previous_attributes: { status: "confirmed" } },
  "offering.created": { object: offeringExample },
  "offering.updated": { object: { ...offeringExample, price: "1450000.00" }, previous_attributes: { price: "1500000.00" } },
  "call.started": { object: call },
  "call.completed": {
    object: { ...call, status: "completed", ended_at: EXAMPLE_LATER, duration_seconds: 300 },
    previous_attributes: { status: "in_progress", ended_at: null, duration_seconds: null },
  },
  "call.missed": { object: { ...call, conversation_id: voice.id, status: "missed", ended_at: EXAMPLE_TIME, duration_seconds: 0 } },
  "outbound.sent": { object: sent, conversation: conversationExample, driver: "record", provider_message_id: null },
  "outbound.failed": { object: { ...messageExample, status: "failed" }, conversation: conversationExample, driver: "http", error: "channel answered 503" },
  "sla.breached": { object: handoff, sla: { name: "handoff_response", threshold_seconds: 900, elapsed_seconds: 960 } },
  "csat.received": {
    object: { id: "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b", conversation_id: conversationExample.id, score: 5, comment: "Quick and helpful", created_at: EXAMPLE_LATER },
  },
};

/** An example envelope of `type`, as a consumer receives it. */
export const exampleEnvelope = (type: EventType): EventEnvelope => ({
  id: "evt_2b7e1516-28ae-4d2a-a6ab-f7158809cf4f",
  event: type,
  created_at: EXAMPLE_LATER,
  tenant_id: EXAMPLE_TENANT_ID,
  data: DATA[type],
});
