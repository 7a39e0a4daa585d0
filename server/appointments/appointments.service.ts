// Appointment actions: create (booking.created), and a PATCH whose status and schedule changes
// emit booking.cancelled / booking.completed / booking.rescheduled.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { keysetPage, toListEnvelope } from "../api/pagination";
import { badRequest, conflict, notFound } from "../errors";
import { emitEvent } from "../events/emit-event";
import { changedFields, pickColumns } from "../api/wire";
import { TERMINAL_STATUSES, type Appointment, type CreateAppointmentInput, type UpdateAppointmentInput } from "./appointments.types";

type AppointmentRow = Prisma.AppointmentGetPayload<object>;

export function appointmentToWire(a: AppointmentRow): Appointment {
  return {
    id: a.id,
    customer_name: a.customerName,
    customer_phone: a.customerPhone,
    customer_email: a.customerEmail,
    scheduled_start: a.scheduledStart.toISOString(),
    scheduled_end: a.scheduledEnd.toISOString(),
    status: a.status as Appointment["status"],
    conversation_id: a.conversationId,
    lead_id: a.leadId,
    offering_id: a.offeringId,
    location_text: a.locationText,
    google_calendar_event_id: a.googleCalendarEventId,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

const COLUMNS = {
  customer_name: "customerName", customer_phone: "customerPhone", customer_email: "customerEmail",
  conversation_id: "conversationId", lead_id: "leadId", offering_id: "offeringId", location_text: "locationText",
  google_calendar_event_id: "googleCalendarEventId", status: "status",
} as const;

function toColumns(input: Partial<UpdateAppointmentInput>): Record<string, unknown> {
  const data = pickColumns(input, COLUMNS);
  if (input.scheduled_start !== undefined) data.scheduledStart = new Date(input.scheduled_start);
  if (input.scheduled_end !== undefined) data.scheduledEnd = new Date(input.scheduled_end);
  return data;
}

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

/** Every column, named as Prisma names them, for the raw page query below. */
const APPOINTMENT_COLUMNS = `id, tenant_id AS "tenantId", customer_name AS "customerName", customer_phone AS "customerPhone",
  customer_email AS "customerEmail", scheduled_start AS "scheduledStart", scheduled_end AS "scheduledEnd", status,
  conversation_id AS "conversationId", lead_id AS "leadId", offering_id AS "offeringId", location_text AS "locationText",
  google_calendar_event_id AS "googleCalendarEventId", created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function listAppointments(db: TenantDb, tenantId: string, input: { limit?: number; cursor?: string }) {
  const page = await keysetPage({
    ...input,
    sortKey: "scheduledStart",
    direction: "desc",
    loadCursor: (id) => db.appointment.findFirst({ where: { id }, select: { scheduledStart: true } }),
    findMany: (args) => db.appointment.findMany(args),
    // One query per deep page: the row-value comparison against the cursor row is an index
    // condition on (tenant_id, scheduled_start DESC, id DESC). Raw SQL, so the tenant is explicit.
    findPageAfter: (cursorId, take) =>
      db.$queryRawUnsafe<AppointmentRow[]>(
        `SELECT ${APPOINTMENT_COLUMNS} FROM appointments
         WHERE tenant_id = $1::uuid
           AND (scheduled_start, id) < (SELECT scheduled_start, id FROM appointments WHERE id = $2::uuid AND tenant_id = $1::uuid)
         ORDER BY scheduled_start DESC, id DESC LIMIT $3`,
        tenantId, cursorId, take,
      ),
  });
  return toListEnvelope(page, appointmentToWire);
}

export async function createAppointment(db: TenantDb, input: CreateAppointmentInput): Promise<Appointment> {
  assertEndAfterStart(new Date(input.scheduled_start), new Date(input.scheduled_end));
  return db.$transaction(async (tx) => {
    await assertReferencesVisible(tx, input);
    const row = await tx.appointment.create({ data: { ...toColumns(input), status: "confirmed" } as never });
    const appointment = appointmentToWire(row);
    await emitEvent(tx, "booking.created", { object: appointment });
    return appointment;
  });
}

export async function updateAppointment(db: TenantDb, tenantId: string, input: UpdateAppointmentInput): Promise<Appointment> {
  const { id, ...patch } = input;
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "appointments", tenantId, id))) throw notFound();
    const beforeRow = await tx.appointment.findFirst({ where: { id } });
    if (!beforeRow) throw notFound();
    const before = appointmentToWire(beforeRow);
    const data = toColumns(patch);
    // What the row would become, to decide whether anything changes at all.
    const candidate = appointmentToWire({ ...beforeRow, ...data } as AppointmentRow);
    const changes = changedFields(before, candidate);
    if (Object.keys(changes).length === 0) return before;
    if (TERMINAL_STATUSES.has(beforeRow.status)) {
      throw conflict(`appointment is ${beforeRow.status}; a ${beforeRow.status} appointment cannot be changed`);
    }
    assertEndAfterStart(new Date(candidate.scheduled_start), new Date(candidate.scheduled_end));
    await assertReferencesVisible(tx, patch);
    const appointment = appointmentToWire(await tx.appointment.update({ where: { id }, data: data as never }));

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
