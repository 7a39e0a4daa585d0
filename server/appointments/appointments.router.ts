import { router, tenantProcedure } from "../trpc/trpc";
import {
  appointmentIdInput,
  appointmentListSchema,
  appointmentSchema,
  createAppointmentInput,
  listAppointmentsInput,
  updateAppointmentInput,
} from "./appointments.types";
import { createAppointment, getAppointment, listAppointments, updateAppointment } from "./appointments.service";

const TAGS = ["Appointments"];

export const appointmentsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/appointments",
        tags: TAGS,
        summary: "List appointments",
        description: "Ordered by scheduled_start, then id, descending.",
        protect: true,
      },
    })
    .input(listAppointmentsInput)
    .output(appointmentListSchema)
    .query(({ ctx, input }) => listAppointments(ctx.sql, input)),

  get: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/appointments/{id}",
        tags: TAGS,
        summary: "Get an appointment",
        description: "Another tenant's appointment answers the same 404 as a missing one.",
        protect: true,
      },
    })
    .input(appointmentIdInput)
    .output(appointmentSchema)
    .query(({ ctx, input }) => getAppointment(ctx.db, input.id)),

  create: tenantProcedure("appointments:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/appointments",
        tags: TAGS,
        summary: "Create an appointment",
        description:
          "Created as `confirmed`; `scheduled_end` must be after `scheduled_start`; referenced conversation, lead and offering must belong to the tenant. Emits `booking.created`.",
        protect: true,
      },
      successStatus: 201,
    })
    .input(createAppointmentInput)
    .output(appointmentSchema)
    .mutation(({ ctx, input }) => createAppointment(ctx.db, input)),

  update: tenantProcedure("appointments:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/appointments/{id}",
        tags: TAGS,
        summary: "Reschedule, cancel or complete an appointment",
        description:
          "`cancelled` and `completed` are terminal: changing such an appointment is a 409. Emits `booking.rescheduled`, `booking.cancelled` or `booking.completed`.",
        protect: true,
        errorResponses: [409],
      },
    })
    .input(updateAppointmentInput)
    .output(appointmentSchema)
    .mutation(({ ctx, input }) => updateAppointment(ctx.db, input)),
});
