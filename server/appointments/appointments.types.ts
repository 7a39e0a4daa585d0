import { z } from "zod";
import { invalid, isoDateTime, uuid } from "../shared/wire";
import { listEnvelope, pageQuery } from "../shared/pagination";
import { unknownFieldMessage } from "../shared/strict-body";

export const APPOINTMENT_STATUSES = ["confirmed", "cancelled", "completed"] as const;
export const TERMINAL_STATUSES = new Set(["cancelled", "completed"]);

export const appointmentSchema = z
  .object({
    id: z.uuid(),
    customer_name: z.string(),
    customer_phone: z.string(),
    customer_email: z.string().nullable(),
    scheduled_start: z.string().describe("ISO 8601 date-time"),
    scheduled_end: z.string().describe("ISO 8601 date-time"),
    status: z.enum(APPOINTMENT_STATUSES).describe("Created as `confirmed`; `cancelled` and `completed` are terminal"),
    conversation_id: z.uuid().nullable(),
    lead_id: z.uuid().nullable(),
    offering_id: z.uuid().nullable(),
    location_text: z.string().nullable(),
    google_calendar_event_id: z.string().nullable(),
    created_at: z.string().describe("ISO 8601 date-time"),
    updated_at: z.string().describe("ISO 8601 date-time"),
  })
  .meta({ id: "Appointment" });

const fields = {
  customer_name: z.string().trim().min(1).max(200),
  customer_phone: z.string().trim().min(1).max(40),
  customer_email: z.email(invalid("must be an email address")).max(320).nullable(),
  scheduled_start: isoDateTime(),
  scheduled_end: isoDateTime(),
  conversation_id: uuid().nullable(),
  lead_id: uuid().nullable(),
  offering_id: uuid().nullable(),
  location_text: z.string().max(1000).nullable(),
  google_calendar_event_id: z.string().max(1024).nullable(),
};

export const createAppointmentInput = z.strictObject(
  {
    ...fields,
    customer_email: fields.customer_email.optional(),
    conversation_id: fields.conversation_id.optional(),
    lead_id: fields.lead_id.optional(),
    offering_id: fields.offering_id.optional(),
    location_text: fields.location_text.optional(),
    google_calendar_event_id: fields.google_calendar_event_id.optional(),
  },
  unknownFieldMessage(),
);

const updatable = { ...fields, status: z.enum(APPOINTMENT_STATUSES) };
export const updateAppointmentInput = z
  .strictObject(
    {
      id: uuid().describe("Appointment id"),
      ...(Object.fromEntries(Object.entries(updatable).map(([k, s]) => [k, s.optional()])) as {
        [K in keyof typeof updatable]: z.ZodOptional<(typeof updatable)[K]>;
      }),
    },
    unknownFieldMessage(),
  )
  .refine((body) => Object.keys(updatable).some((k) => k in body), {
    message: "request body must contain at least one updatable field",
  });

export const listAppointmentsInput = z.object(pageQuery);
export const appointmentListSchema = listEnvelope(appointmentSchema, "AppointmentList");

export type Appointment = z.infer<typeof appointmentSchema>;
export type CreateAppointmentInput = z.infer<typeof createAppointmentInput>;
export type UpdateAppointmentInput = z.infer<typeof updateAppointmentInput>;
