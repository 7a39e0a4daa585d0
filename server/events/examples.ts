// One example envelope per event type, for the OpenAPI document's `webhooks`. Built from the
// domains' resource examples; a test validates each against the event catalog's schemas.
import { EXAMPLE_LATER, EXAMPLE_TENANT_ID, EXAMPLE_TIME } from "../lib/examples";
import { appointmentExample } from "../appointments/appointments.examples";
import { callExample } from "../calls/calls.examples";
import { conversationExample, messageExample } from "../conversations/conversations.examples";
import { leadExample, qualifiedLeadExample } from "../leads/leads.examples";
import { offeringExample } from "../offerings/offerings.examples";
import { erasedRecordsExample } from "../erasure/erasure.examples";
import type { EventEnvelope, EventType } from "./catalog";

/** The call as it starts: answered, in progress (the calls domain's example is the finished call). */
const call = {
  ...callExample,
  status: "in_progress",
  ended_at: null,
  duration_seconds: null,
  end_reason: null,
  recording_url: null,
  summary: null,
  updated_at: EXAMPLE_TIME,
};
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
  "conversation.closed": {
    object: { ...conversationExample, status: "closed", closed_at: EXAMPLE_LATER },
    previous_attributes: { status: "open", closed_at: null },
  },
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
    object: callExample,
    previous_attributes: { status: "in_progress", ended_at: null, duration_seconds: null, end_reason: null, recording_url: null, summary: null },
  },
  "call.missed": {
    object: {
      ...call,
      status: "missed",
      answered_at: null,
      ended_at: "2026-11-21T10:00:25.000Z",
      duration_seconds: 0,
      end_reason: "dial_no_answer",
      updated_at: "2026-11-21T10:00:25.000Z",
    },
  },
  "outbound.sent": { object: sent, conversation: conversationExample, driver: "record", provider_message_id: null },
  "outbound.failed": { object: { ...messageExample, status: "failed" }, conversation: conversationExample, driver: "http", error: "channel answered 503" },
  "sla.breached": { object: handoff, waited_seconds: 960, sla_minutes: 15 },
  "csat.received": {
    object: {
      id: "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b",
      conversation_id: conversationExample.id,
      score: 5,
      comment: "Quick and helpful",
      created_at: EXAMPLE_LATER,
    },
  },
  "customer.erased": { object: erasedRecordsExample },
};

/** An example envelope of `type`, as a consumer receives it. */
export const exampleEnvelope = (type: EventType): EventEnvelope => ({
  id: "evt_2b7e1516-28ae-4d2a-a6ab-f7158809cf4f",
  event: type,
  created_at: EXAMPLE_LATER,
  tenant_id: EXAMPLE_TENANT_ID,
  data: DATA[type],
});
