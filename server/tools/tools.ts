// The assistant's eight tools. Each is a thin adapter over the domain service that the matching
// /api/v1 operation calls, so it follows the same rules and emits exactly the same events.
import { z } from "zod";
import { uuid } from "../lib/wire";
import { unknownFieldMessage } from "../lib/strict-body";
import { offeringSchema } from "../offerings/offerings.types";
import { searchOfferings, searchOfferingsInput } from "../offerings/offerings.search";
import { appointmentSchema, createAppointmentInput, type Appointment, type CreateAppointmentInput } from "../appointments/appointments.types";
import { bookAppointment, updateAppointment } from "../appointments/appointments.service";
import { handoffLeadInput, leadSchema } from "../leads/leads.types";
import { requestLeadHandoff } from "../leads/leads.service";
import { csatSchema, recordCsatInput } from "../csat/csat.types";
import { recordCsat } from "../csat/csat.service";
import { conversationContextSchema, getConversationContext, upsertConversationLead, upsertLeadInput } from "./conversation-tools";
import { defineTool, requiredScope, toolInputSchema, type ToolContext, type ToolDeclaration } from "./define-tool";
import { storedToolCallResult } from "./tool-calls";

const EXAMPLE_CONVERSATION = "3f2b9c1e-5a4d-4e8f-9b7a-1c2d3e4f5a6b";
const EXAMPLE_LEAD = "7d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a";
const EXAMPLE_APPOINTMENT = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";
const EXAMPLE_OFFERING = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";

const appointmentId = uuid().describe("The appointment's id (from book_appointment or get_conversation_context)");
const conversationIdInput = z.strictObject({ conversation_id: uuid().describe("The conversation you are in") }, unknownFieldMessage());

const searchOfferingsTool = defineTool({
  name: "search_offerings",
  title: "Search offerings",
  description:
    "Find the business's active offerings (properties, services, products) that match what the customer asks for. Searches titles and descriptions in English and Arabic, case-insensitively; every word must match and the last word may be partial. Narrow with exact attribute values (e.g. bedrooms). Returns the best matches first, 5 by default, at most 10. Use it before quoting prices or availability, and never offer anything it did not return.",
  kind: "read",
  scope: "assistant:read",
  input: searchOfferingsInput,
  output: z.object({ data: z.array(offeringSchema).describe("Best match first") }),
  example: { query: "marina apartment", attributes: { bedrooms: 2 }, limit: 5 },
  run: ({ sql }, input) => searchOfferings(sql, input),
});

const getConversationContextTool = defineTool({
  name: "get_conversation_context",
  title: "Get conversation context",
  description:
    "Read what you need before answering: the conversation (channel, customer, status), its last 20 messages oldest first, its lead (null if none yet) and its upcoming confirmed appointments. Call it at the start of a turn when you lack context.",
  kind: "read",
  scope: "assistant:read",
  input: conversationIdInput,
  output: conversationContextSchema,
  example: { conversation_id: EXAMPLE_CONVERSATION },
  run: ({ db }, input) => getConversationContext(db, input.conversation_id),
});

const upsertLeadTool = defineTool({
  name: "upsert_lead",
  title: "Create or update the conversation's lead",
  description:
    "Record what you learned about the customer on the conversation's lead: creates it if the conversation has none, otherwise updates it (attributes are merged; a null attribute value removes the key). Set status 'qualified' once the customer has a real need you can serve; a lead never returns to 'new'. Returns the lead.",
  kind: "write",
  scope: "leads:write",
  input: upsertLeadInput,
  output: leadSchema,
  example: {
    conversation_id: EXAMPLE_CONVERSATION,
    customer_name: "Ali Reza",
    customer_phone: "+971501234567",
    offering_id: EXAMPLE_OFFERING,
    attributes: { budget_aed: 900000, move_in: "2026-12" },
    status: "qualified",
  },
  run: ({ db }, input) => upsertConversationLead(db, input),
});

const bookAppointmentTool = defineTool({
  name: "book_appointment",
  title: "Book an appointment",
  description:
    "Book a confirmed appointment (a viewing, a visit, a service slot) once the customer has agreed to a time. scheduled_end must be after scheduled_start (ISO 8601 with a time zone offset). Link it to the conversation, its lead and the offering when you have them. Pass tool_call_id so a retry never books twice.",
  kind: "write",
  scope: "appointments:write",
  input: createAppointmentInput,
  output: appointmentSchema,
  example: {
    customer_name: "Ali Reza",
    customer_phone: "+971501234567",
    scheduled_start: "2026-11-24T10:00:00.000Z",
    scheduled_end: "2026-11-24T10:30:00.000Z",
    conversation_id: EXAMPLE_CONVERSATION,
    lead_id: EXAMPLE_LEAD,
    offering_id: EXAMPLE_OFFERING,
    location_text: "Marina Gate 2, lobby",
  },
  recordsItsCall: true,
  confirmsCallerKey: true,
  run: bookOnce,
});

/**
 * book_appointment in one statement (bookAppointment, the same rules as POST /appointments) with
 * its tool-call record; a repeat of the id answers the first call's stored answer.
 */
async function bookOnce({ db, sql, toolCallId, keyToConfirm }: ToolContext, input: CreateAppointmentInput): Promise<Appointment> {
  const call = toolCallId === undefined ? undefined : { tool: "book_appointment", id: toolCallId };
  for (;;) {
    const booking = await bookAppointment(db, input, call, keyToConfirm);
    if ("booked" in booking) return booking.booked;
    // The first call committed while this one waited for it: its answer is there now.
    const text = booking.earlier ?? (call ? await storedToolCallResult(sql, call.tool, call.id) : null);
    // null: the record was pruned in between; the call runs again (as withToolCall does).
    if (text !== null) return JSON.parse(text) as Appointment;
  }
}

const rescheduleAppointmentTool = defineTool({
  name: "reschedule_appointment",
  title: "Reschedule an appointment",
  description: "Move a confirmed appointment to a new time the customer agreed to. A cancelled or completed appointment cannot be changed (conflict).",
  kind: "write",
  scope: "appointments:write",
  input: z.strictObject(
    {
      appointment_id: appointmentId,
      scheduled_start: createAppointmentInput.shape.scheduled_start,
      scheduled_end: createAppointmentInput.shape.scheduled_end,
    },
    unknownFieldMessage(),
  ),
  output: appointmentSchema,
  example: { appointment_id: EXAMPLE_APPOINTMENT, scheduled_start: "2026-11-25T15:00:00.000Z", scheduled_end: "2026-11-25T15:30:00.000Z" },
  run: ({ db }, { appointment_id, ...times }) => updateAppointment(db, { id: appointment_id, ...times }),
});

const cancelAppointmentTool = defineTool({
  name: "cancel_appointment",
  title: "Cancel an appointment",
  description: "Cancel an appointment the customer no longer wants. Cancelling is final; a completed appointment cannot be cancelled (conflict).",
  kind: "write",
  scope: "appointments:write",
  input: z.strictObject({ appointment_id: appointmentId }, unknownFieldMessage()),
  output: appointmentSchema,
  example: { appointment_id: EXAMPLE_APPOINTMENT },
  run: ({ db }, input) => updateAppointment(db, { id: input.appointment_id, status: "cancelled" }),
});

const requestHandoffTool = defineTool({
  name: "request_handoff",
  title: "Hand the conversation to a human",
  description:
    "Hand the conversation to a human operator: when the customer asks for a person, is upset, or needs something you cannot do (negotiation, complaints, exceptions). Needs the conversation's lead (create it with upsert_lead first). Give a short reason the operator will read. Repeating it while the handoff is open changes nothing.",
  kind: "write",
  scope: "leads:write",
  input: z.strictObject(
    { lead_id: uuid().describe("The conversation's lead (from upsert_lead or get_conversation_context)"), reason: handoffLeadInput.shape.reason },
    unknownFieldMessage(),
  ),
  output: leadSchema,
  example: { lead_id: EXAMPLE_LEAD, reason: "Wants to negotiate the price with an agent" },
  run: ({ db }, input) => requestLeadHandoff(db, { id: input.lead_id, reason: input.reason }),
});

const recordCsatTool = defineTool({
  name: "record_csat",
  title: "Record customer satisfaction",
  description:
    "Record the customer's satisfaction rating when they give one at the end of a conversation: a score from 1 (very unsatisfied) to 5 (very satisfied) and, if they said anything about it, their comment.",
  kind: "write",
  scope: "conversations:write",
  input: recordCsatInput,
  output: csatSchema,
  example: { conversation_id: EXAMPLE_CONVERSATION, score: 5, comment: "Quick and helpful" },
  run: ({ db }, input) => recordCsat(db, input),
});

/** Every tool, in the order the catalog lists them. */
const TOOLS: readonly ToolDeclaration[] = [
  searchOfferingsTool,
  getConversationContextTool,
  upsertLeadTool,
  bookAppointmentTool,
  rescheduleAppointmentTool,
  cancelAppointmentTool,
  requestHandoffTool,
  recordCsatTool,
];

/** A tool as callers see it: the input it accepts (with `tool_call_id` for writes) and the scope it needs. */
export type RegisteredTool = { tool: ToolDeclaration; input: z.ZodObject; scope: ReturnType<typeof requiredScope> };

export const REGISTERED_TOOLS: ReadonlyMap<string, RegisteredTool> = new Map(
  TOOLS.map((tool) => [tool.name, { tool, input: toolInputSchema(tool), scope: requiredScope(tool) }]),
);
