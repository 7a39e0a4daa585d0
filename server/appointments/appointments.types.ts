import { z } from "zod";
import { PHONE_INPUT_DOC, STORED_PHONE_DOC } from "../lib/phone-docs";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { invalid, isoDateTime, uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";

const APPOINTMENT_STATUSES = ["confirmed", "cancelled", "completed"] as const;
export const TERMINAL_STATUSES = new Set(["cancelled", "completed"]);

const column = resourceFields<Prisma.AppointmentGetPayload<object>>();
const patch = { patch: true } as const;
const isoDateTimeText = () => z.string().describe("ISO 8601 date-time");

/** The appointment, declared once: wire schema, row mapping, SQL select list and patchable columns. */
export const appointmentResource = column.define("Appointment", {
  id: column.value("id", z.uuid()),
  customer_name: column.value("customerName", z.string(), patch),
  customer_phone: column.value("customerPhone", z.string().describe(`${STORED_PHONE_DOC}; an erased one holds \`[erased]\``), patch),
  customer_email: column.value("customerEmail", z.string().nullable(), patch),
  scheduled_start: column.timestamp("scheduledStart", isoDateTimeText(), patch),
  scheduled_end: column.timestamp("scheduledEnd", isoDateTimeText(), patch),
  status: column.value("status", z.enum(APPOINTMENT_STATUSES).describe("Created as `confirmed`; `cancelled` and `completed` are terminal"), patch),
  conversation_id: column.value("conversationId", z.uuid().nullable(), patch),
  lead_id: column.value("leadId", z.uuid().nullable(), patch),
  offering_id: column.value("offeringId", z.uuid().nullable(), patch),
  location_text: column.value("locationText", z.string().nullable(), patch),
  google_calendar_event_id: column.value("googleCalendarEventId", z.string().nullable(), patch),
  created_at: column.timestamp("createdAt", isoDateTimeText()),
  updated_at: column.timestamp("updatedAt", isoDateTimeText()),
});
export const appointmentSchema = appointmentResource.schema;

const fields = {
  customer_name: z.string().trim().min(1).max(200),
  customer_phone: z.string().trim().min(1).max(40).describe(PHONE_INPUT_DOC),
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
export const appointmentIdInput = z.object({ id: uuid().describe("Appointment id") });
export const appointmentListSchema = listEnvelope(appointmentSchema, "AppointmentList");

export type Appointment = z.infer<typeof appointmentSchema>;
export type CreateAppointmentInput = z.infer<typeof createAppointmentInput>;
export type UpdateAppointmentInput = z.infer<typeof updateAppointmentInput>;
