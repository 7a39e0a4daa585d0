// Appointment actions: create (booking.created), and a PATCH whose status and schedule changes
// emit booking.cancelled / booking.completed / booking.rescheduled.
import type { Prisma } from "../db/generated/client";
import { scopeSqlToTenant, type TenantDb, type TenantSql, type TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { sqlKeysetPage, sqlList, toListEnvelope } from "../lib/pagination";
import { badRequest, conflict, notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { APPOINTMENT_EVENTS } from "./appointments.events";
import { OUTBOX_CHANNEL, signalOutboxWrite } from "../outbox/outbox-signal";
import { databaseKind, getSql } from "../db/client";
import { randomUUID } from "node:crypto";
import { changedFields } from "../lib/wire";
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

/** POST /appointments (and the demo's seeds): the same one statement as the assistant's book_appointment. */
export async function createAppointment(db: TenantDb, input: CreateAppointmentInput): Promise<Appointment> {
  const booking = await bookAppointment(scopeSqlToTenant(await getSql(), db.tenantId), input);
  if (!("booked" in booking)) throw notFound();
  return booking.booked;
}

// A booking (POST /appointments and the assistant's book_appointment) as ONE statement: the
// reference checks, the tool-call record, the appointment, its booking.created event and the
// event's webhook deliveries commit together, with no interactive transaction and no Prisma
// per-query work (see docs/assistant-tools.md, "Performance"). Its rules: references visible to
// the tenant, else 404; created `confirmed`; scheduled_end after scheduled_start; and writeEvent's
// outbox rule (one delivery per enabled subscription to the event's type; NOTIFY at commit on
// PostgreSQL, and the in-process signal). The tool-call record is the one
// server/tools/tool-calls.ts describes: claimed with ON CONFLICT DO NOTHING on (tenant_id, tool,
// tool_call_id), so a concurrent repeat waits for this statement and then books nothing; here it
// is written with its result at once.
const BOOK_SQL = {
  text: `WITH visible AS (
  SELECT ($8::uuid IS NULL OR EXISTS (SELECT 1 FROM conversations c WHERE c.tenant_id = $1::uuid AND c.id = $8::uuid))
     AND ($9::uuid IS NULL OR EXISTS (SELECT 1 FROM leads l WHERE l.tenant_id = $1::uuid AND l.id = $9::uuid))
     AND ($10::uuid IS NULL OR EXISTS (SELECT 1 FROM offerings o WHERE o.tenant_id = $1::uuid AND o.id = $10::uuid AND o.deleted_at IS NULL)) AS ok
), claim AS (
  INSERT INTO tool_calls (id, tenant_id, tool, tool_call_id, result)
  SELECT gen_random_uuid(), $1::uuid, $15::text, $16::text, to_jsonb($17::text) FROM visible WHERE ok AND $16::text IS NOT NULL
  ON CONFLICT (tenant_id, tool, tool_call_id) DO NOTHING RETURNING id
), booked AS (
  INSERT INTO appointments (id, tenant_id, customer_name, customer_phone, customer_email, scheduled_start, scheduled_end, status,
    conversation_id, lead_id, offering_id, location_text, google_calendar_event_id, created_at, updated_at)
  SELECT $2::uuid, $1::uuid, $3::text, $4::text, $5::text, $6::timestamptz, $7::timestamptz, 'confirmed',
    $8::uuid, $9::uuid, $10::uuid, $11::text, $12::text, $13::timestamptz, $13::timestamptz
  FROM visible WHERE ok AND ($16::text IS NULL OR EXISTS (SELECT 1 FROM claim))
  RETURNING id
), event AS (
  INSERT INTO events (id, tenant_id, type, data) SELECT gen_random_uuid(), $1::uuid, 'booking.created', $14::text::jsonb FROM booked RETURNING id
), deliveries AS (
  INSERT INTO webhook_deliveries (id, tenant_id, subscription_id, event_id)
  SELECT gen_random_uuid(), $1::uuid, s.id, event.id FROM event
  JOIN webhook_subscriptions s ON s.tenant_id = $1::uuid AND s.enabled AND 'booking.created' = ANY (s.events)
  RETURNING id
), counted AS (SELECT count(*)::int AS n FROM deliveries)
SELECT (SELECT ok FROM visible) AS visible, EXISTS (SELECT 1 FROM booked) AS booked, counted.n AS deliveries,
  (SELECT t.result #>> '{}' FROM tool_calls t WHERE t.tenant_id = $1::uuid AND t.tool = $15::text AND t.tool_call_id = $16::text) AS earlier,
  CASE WHEN $18::boolean AND counted.n > 0 THEN pg_notify('${OUTBOX_CHANNEL}', '') END AS notified
FROM counted`,
};

/** A write tool's call: the tool's name and the runtime's `tool_call_id`. */
export type ToolCallKey = { tool: string; id: string };
/**
 * What bookAppointment did: booked, or (with a tool call) found that call made already. `earlier`
 * is its stored answer as committed when the statement began, null when the first call committed
 * while this one waited for it (then the caller reads it again).
 */
export type Booking = { booked: Appointment } | { earlier: string | null };

export async function bookAppointment(sql: TenantSql, input: CreateAppointmentInput, call?: ToolCallKey): Promise<Booking> {
  const start = new Date(input.scheduled_start);
  const end = new Date(input.scheduled_end);
  assertEndAfterStart(start, end);
  const now = new Date().toISOString();
  const appointment: Appointment = {
    id: randomUUID(),
    customer_name: input.customer_name,
    customer_phone: input.customer_phone,
    customer_email: input.customer_email ?? null,
    scheduled_start: start.toISOString(),
    scheduled_end: end.toISOString(),
    status: "confirmed",
    conversation_id: input.conversation_id ?? null,
    lead_id: input.lead_id ?? null,
    offering_id: input.offering_id ?? null,
    location_text: input.location_text ?? null,
    google_calendar_event_id: input.google_calendar_event_id ?? null,
    created_at: now,
    updated_at: now,
  };
  // The payload is checked against the catalog as emitEvent does: a mismatch is a bug (a 500, nothing written).
  const data = APPOINTMENT_EVENTS["booking.created"].parse({ object: appointment });
  const a = appointment;
  const [row] = await sql<{ visible: boolean; booked: boolean; deliveries: number; earlier: string | null }>(BOOK_SQL, [
    a.id,
    a.customer_name,
    a.customer_phone,
    a.customer_email,
    a.scheduled_start,
    a.scheduled_end,
    a.conversation_id,
    a.lead_id,
    a.offering_id,
    a.location_text,
    a.google_calendar_event_id,
    now,
    JSON.stringify(data),
    call?.tool ?? null,
    call?.id ?? null,
    JSON.stringify(appointment),
    databaseKind() === "postgres",
  ]);
  if (row.booked) {
    if (row.deliveries > 0) signalOutboxWrite();
    return { booked: appointment };
  }
  if (call && (row.earlier !== null || row.visible)) return { earlier: row.earlier };
  throw notFound();
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
