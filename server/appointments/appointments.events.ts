// The events the appointments domain emits, and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { objectChanged, objectOnly } from "../outbox/event-payloads";
import { appointmentSchema } from "./appointments.types";

export const APPOINTMENT_EVENTS = {
  "booking.created": objectOnly(appointmentSchema),
  "booking.rescheduled": objectChanged(appointmentSchema),
  "booking.cancelled": objectChanged(appointmentSchema),
  "booking.completed": objectChanged(appointmentSchema),
} as const;
