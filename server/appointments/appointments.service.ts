// Appointment actions: create (booking.created), and a PATCH whose status and schedule changes
// emit booking.cancelled / booking.completed / booking.rescheduled.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantSql, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { sqlKeysetPage, sqlList, toListEnvelope } from "../shared/pagination";
import { badRequest, conflict, notFound } from "../shared/errors";
import { eventEmitter } from "../outbox/emit-event";
import { APPOINTMENT_EVENTS } from "./appointments.events";
import { changedFields } from "../shared/wire";
import { appointmentResource, TERMINAL_STATUSES, type Appointment, type CreateAppointmentInput, type UpdateAppointmentInput } from "./appointments.types";

const emitEvent = eventEmitter(APPOINTMENT_EVENTS);

type AppointmentRow = Prisma.AppointmentGetPayload<object>;

export const appointmentToWire = appointmentResource.toWire;

/** A referenced row must be visible to the tenant; otherwise 404, exactly like a missing one. */
async function assertReferencesVisible(tx: TenantTx, refs: { conversation_id?: string | null; lead_id?: string | null; offering_id?: string | null }) {
  const checks: Promise<unknown>[] = [];
  if (refs.conversation_id) checks.push(tx.conversation.findFirst({ where: { id: refs.conversation_id }, select: { id: true } }));
  if (refs.lead_id) checks.push(tx.lead.findFirst({ where: { id: refs.lead_id }, select: { id: true } }));
  if (refs.offering_id) checks.push(tx.offering.findFirst({ where: { id: refs.offering_id, deletedAt: null }, select: { id: true } }));
  for (const found of await Promise.all(checks)) if (!found) throw notFound();
}

function assertEndAfterStart(start: Date, end: Date) {
  if (end.getTime() <= start.getTime()) throw badRequest("invalid field 'scheduled_end': must be after scheduled_start", "scheduled_end");
}

/** The list, in prepared SQL answering wire-shaped rows: any page, however deep, is one indexed query. */
const APPOINTMENTS_LIST = sqlList({
  table: "appointments",
  select: appointmentResource.sqlSelect,
  sortColumn: "scheduled_start",
  direction: "desc",
});

export async function listAppointments(sql: TenantSql, input: { limit?: number; cursor?: string }) {
  return toListEnvelope(await sqlKeysetPage<Appointment>(sql, APPOINTMENTS_LIST, input), (row) => row);
}

export async function createAppointment(db: TenantDb, input: CreateAppointmentInput): Promise<Appointment> {
  assertEndAfterStart(new Date(input.scheduled_start), new Date(input.scheduled_end));
  return db.$transaction(async (tx) => {
    await assertReferencesVisible(tx, input);
    const row = await tx.appointment.create({ data: { ...appointmentResource.patchToColumns(input), tenantId: tx.tenantId, status: "confirmed" } });
    const appointment = appointmentToWire(row);
    await emitEvent(tx, "booking.created", { object: appointment });
    return appointment;
  });
}

export async function updateAppointment(db: TenantDb, input: UpdateAppointmentInput): Promise<Appointment> {
  const { id, ...patch } = input;
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "appointments", id))) throw notFound();
    const beforeRow = await tx.appointment.findFirst({ where: { id } });
    if (!beforeRow) throw notFound();
    const before = appointmentToWire(beforeRow);
    const data = appointmentResource.patchToColumns(patch);
    // What the row would become, to decide whether anything changes at all.
    const candidate = appointmentToWire({ ...beforeRow, ...data } as AppointmentRow);
    const changes = changedFields(before, candidate);
    if (Object.keys(changes).length === 0) return before;
    if (TERMINAL_STATUSES.has(beforeRow.status)) {
      throw conflict(`appointment is ${beforeRow.status}; a ${beforeRow.status} appointment cannot be changed`);
    }
    assertEndAfterStart(new Date(candidate.scheduled_start), new Date(candidate.scheduled_end));
    await assertReferencesVisible(tx, patch);
    const appointment = appointmentToWire(await tx.appointment.update({ where: { id }, data }));

    if ("scheduled_start" in changes || "scheduled_end" in changes) {
      await emitEvent(tx, "booking.rescheduled", {
        object: appointment,
        previous_attributes: { scheduled_start: before.scheduled_start, scheduled_end: before.scheduled_end },
      });
    }
    if (changes.status !== undefined && appointment.status === "cancelled") {
      await emitEvent(tx, "booking.cancelled", { object: appointment, previous_attributes: { status: before.status } });
    }
    if (changes.status !== undefined && appointment.status === "completed") {
      await emitEvent(tx, "booking.completed", { object: appointment, previous_attributes: { status: before.status } });
    }
    return appointment;
  });
}
