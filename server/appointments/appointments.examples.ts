// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import type { Appointment } from "./appointments.types";

export const appointmentExample: Appointment = {
  id: "b3f5c1d2-8e4a-4f6b-9c7d-2a1e3f4b5c6d",
  customer_name: "Layla Haddad",
  customer_phone: "+971501234567",
  customer_email: "layla@example.com",
  scheduled_start: "2026-11-25T09:00:00.000Z",
  scheduled_end: "2026-11-25T09:30:00.000Z",
  status: "confirmed",
  conversation_id: null,
  lead_id: null,
  offering_id: null,
  location_text: "Marina Gate 2, lobby",
  google_calendar_event_id: null,
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

export const appointmentsExamples: OperationExamples = {
  "GET /appointments": { query: { limit: 20 }, response: { data: [appointmentExample], next_cursor: null, has_more: false } },
  "GET /appointments/{id}": { path: { id: appointmentExample.id }, response: appointmentExample },
  "POST /appointments": {
    body: {
      customer_name: appointmentExample.customer_name,
      customer_phone: appointmentExample.customer_phone,
      customer_email: appointmentExample.customer_email,
      scheduled_start: appointmentExample.scheduled_start,
      scheduled_end: appointmentExample.scheduled_end,
      location_text: appointmentExample.location_text,
    },
    response: appointmentExample,
  },
  "PATCH /appointments/{id}": {
    path: { id: appointmentExample.id },
    body: { scheduled_start: "2026-11-25T10:00:00.000Z", scheduled_end: "2026-11-25T10:30:00.000Z" },
    response: { ...appointmentExample, scheduled_start: "2026-11-25T10:00:00.000Z", scheduled_end: "2026-11-25T10:30:00.000Z", updated_at: EXAMPLE_LATER },
  },
};
