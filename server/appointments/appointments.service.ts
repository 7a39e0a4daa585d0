// Appointment actions: create (booking.created), and a PATCH whose status and schedule changes
// emit booking.cancelled / booking.completed / booking.rescheduled.
import { joinedTransactionSql } from "../db/join-transaction";
import { Prisma } from "../db/generated/client";
import { modelColumns, rowInsert, TABLE } from "../db/columns";
import { scopeSqlToTenant, type TenantDb, type TenantSql, type TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { sqlKeysetPage, sqlList, toListEnvelope } from "../lib/pagination";
import { badRequest, conflict, notFound } from "../lib/errors";
import { keyIsCurrentSql, StaleKeyError } from "../auth/authenticate";
import { eventEmitter, eventFanOutSql, eventOrigin, wakeDeliveryWorkersSql } from "../outbox/emit-event";
import { APPOINTMENT_EVENTS } from "./appointments.events";
import { signalOutboxWrite } from "../outbox/outbox-signal";
import { databaseKind, getSql, sqlIfOpen } from "../db/client";
import { randomUUID } from "node:crypto";
import { changedFields } from "../lib/wire";
import { normalizePhoneField } from "../lib/customer-identifier";
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
  columns: modelColumns(Prisma.AppointmentScalarFieldEnum),
  select: appointmentResource.sqlSelect,
  sortField: "scheduledStart",
  direction: "desc",
});

export async function listAppointments(sql: TenantSql, input: { limit?: number; cursor?: string }) {
  return toListEnvelope(await sqlKeysetPage<Appointment>(sql, APPOINTMENTS_LIST, input), (row) => row);
}

export async function getAppointment(db: TenantDb, id: string): Promise<Appointment> {
  const row = await db.appointment.findFirst({ where: { id } });
  if (!row) throw notFound();
  return appointmentToWire(row);
}

/** POST /appointments (and the demo's seeds): the same one statement as the assistant's book_appointment. */
export async function createAppointment(db: TenantDb, input: CreateAppointmentInput): Promise<Appointment> {
  const booking = await bookAppointment(db, input);
  if (!("booked" in booking)) throw notFound();
  return booking.booked;
}

// A booking (POST /appointments and the assistant's book_appointment) as ONE statement: the
// reference checks, the tool-call record, the appointment, its booking.created event and the
// event's webhook deliveries commit together, with no interactive transaction and no Prisma
// per-query work (see docs/assistant-tools.md, "Performance"). Its rules: references visible to
// the tenant, else 404; created `confirmed`; scheduled_end after scheduled_start; and the outbox's
// own fan-out (eventFanOutSql: one delivery per enabled subscription to the event's type; NOTIFY at
// commit on PostgreSQL, and the in-process signal). The appointment travels ONCE, as its wire JSON
// (the row through the resource declaration's toWire, which is also the answer): the statement
// makes it the row (jsonb_populate_record over the model's columns, with the tenant), the event's
// `{ "object": … }` and the tool call's stored result, so the server serializes it once and
// PostgreSQL parses it once. That works because the wire form is the row's columns but tenant_id,
// with the same names and values (timestamps as ISO text): assertWireIsRow checks it when this module
// loads, so a column the model gains fails at startup, not silently as NULL. The tool-call record is the one
// server/tools/tool-calls.ts describes: claimed with ON CONFLICT DO NOTHING on (tenant_id, tool,
// tool_call_id), so a concurrent repeat waits for this statement and then books nothing; here it
// is written with its result at once. (Its pg_notify's void is read as text: Prisma, which runs it
// inside an Idempotency-Key's transaction, reads no void column.)
const APPOINTMENT = modelColumns(Prisma.AppointmentScalarFieldEnum);
const APPOINTMENT_ROW = rowInsert<AppointmentRow>(Prisma.AppointmentScalarFieldEnum);
/** The wire form's fields are exactly the row's columns but tenant_id (see above): else a booking would lose a column. */
function assertWireIsRow(): void {
  const wire = Object.keys(appointmentResource.schema.shape).sort().join();
  const columns = Object.values(APPOINTMENT)
    .filter((column) => column !== APPOINTMENT.tenantId)
    .sort()
    .join();
  if (wire !== columns) throw new Error(`appointment wire fields (${wire}) are not the row's columns but tenant_id (${columns})`);
}
assertWireIsRow();
const TC = modelColumns(Prisma.ToolCallScalarFieldEnum);
const CONVERSATION = modelColumns(Prisma.ConversationScalarFieldEnum);
const LEAD = modelColumns(Prisma.LeadScalarFieldEnum);
const OFFERING = modelColumns(Prisma.OfferingScalarFieldEnum);
const BOOK_SQL = {
  text: `WITH w AS (SELECT $2::text::jsonb AS wire
), r AS (SELECT p.* FROM w, jsonb_populate_record(NULL::${TABLE.Appointment}, w.wire || jsonb_build_object('${APPOINTMENT.tenantId}', $1::uuid)) p
), caller AS (SELECT ${keyIsCurrentSql("$8::uuid", "$1::uuid")} AS key_ok
), visible AS (
  SELECT (SELECT key_ok FROM caller) AND (r.${APPOINTMENT.conversationId} IS NULL OR EXISTS (SELECT 1 FROM ${TABLE.Conversation} c WHERE c.${CONVERSATION.tenantId} = $1::uuid AND c.${CONVERSATION.id} = r.${APPOINTMENT.conversationId}))
     AND (r.${APPOINTMENT.leadId} IS NULL OR EXISTS (SELECT 1 FROM ${TABLE.Lead} l WHERE l.${LEAD.tenantId} = $1::uuid AND l.${LEAD.id} = r.${APPOINTMENT.leadId}))
     AND (r.${APPOINTMENT.offeringId} IS NULL OR EXISTS (SELECT 1 FROM ${TABLE.Offering} o WHERE o.${OFFERING.tenantId} = $1::uuid AND o.${OFFERING.id} = r.${APPOINTMENT.offeringId} AND o.${OFFERING.deletedAt} IS NULL)) AS ok
  FROM r
), claim AS (
  INSERT INTO ${TABLE.ToolCall} (${TC.id}, ${TC.tenantId}, ${TC.tool}, ${TC.toolCallId}, ${TC.result})
  SELECT gen_random_uuid(), $1::uuid, $3::text, $4::text, to_jsonb($2::text) FROM visible WHERE ok AND $4::text IS NOT NULL
  ON CONFLICT (${TC.tenantId}, ${TC.tool}, ${TC.toolCallId}) DO NOTHING RETURNING ${TC.id}
), booked AS (
  INSERT INTO ${TABLE.Appointment} (${APPOINTMENT_ROW.columns})
  SELECT ${APPOINTMENT_ROW.columns} FROM r, visible WHERE ok AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM claim))
  RETURNING ${APPOINTMENT.id}
), ${eventFanOutSql({ tenant: "$1::uuid", type: "'booking.created'", data: "(SELECT jsonb_build_object('object', wire) FROM w)", origin: { requestId: "$6::text", traceParent: "$7::text" }, source: "booked" })},
counted AS (SELECT count(*)::int AS n FROM deliveries)
SELECT (SELECT key_ok FROM caller) AS key_ok, (SELECT ok FROM visible) AS visible, EXISTS (SELECT 1 FROM booked) AS booked, counted.n AS deliveries,
  -- Read only when nothing was booked (a repeated call): a booking does not look its own id up.
  CASE WHEN $4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM booked)
    THEN (SELECT t.${TC.result} #>> '{}' FROM ${TABLE.ToolCall} t WHERE t.${TC.tenantId} = $1::uuid AND t.${TC.tool} = $3::text AND t.${TC.toolCallId} = $4::text) END AS earlier,
  (${wakeDeliveryWorkersSql("counted.n > 0", "$5::boolean")})::text AS notified
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

/** The row a booking writes: the body's columns, created `confirmed` now; what the body leaves out is null. */
function bookedRow(tenantId: string, input: CreateAppointmentInput): AppointmentRow {
  const now = new Date();
  return {
    id: randomUUID(),
    tenantId,
    status: "confirmed",
    customerEmail: null,
    conversationId: null,
    leadId: null,
    offeringId: null,
    locationText: null,
    googleCalendarEventId: null,
    ...appointmentResource.patchToColumns(input),
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Where a booking's statement runs: in the caller's transaction when there is one (an
 * Idempotency-Key's: the booking commits with its stored answer), else on the statement connections
 * (server/db/client.ts), never on the one read connection the request's key lookup and the hot
 * lists pipeline on: a booking commits (a WAL flush) and may wait on a repeated tool call's lock,
 * and everything queued behind it on that connection would wait too.
 */
async function bookingSql(db: TenantDb): Promise<TenantSql> {
  return joinedTransactionSql(db) ?? scopeSqlToTenant(sqlIfOpen() ?? (await getSql()), db.tenantId);
}

/**
 * `keyToConfirm`: the caller's API key when this process remembered it rather than looking it up
 * (server/auth/authenticate.ts): the statement books nothing unless it is still valid, and then
 * throws `StaleKeyError`.
 */
export async function bookAppointment(db: TenantDb, input: CreateAppointmentInput, call?: ToolCallKey, keyToConfirm: string | null = null): Promise<Booking> {
  const sql = await bookingSql(db);
  const row = bookedRow(sql.tenantId, withStoredPhone(input));
  assertEndAfterStart(row.scheduledStart, row.scheduledEnd);
  const appointment = appointmentToWire(row);
  // The payload is checked against the catalog as emitEvent does: a mismatch is a bug (a 500, nothing
  // written). The event's data is `{ object: appointment }` as sent (the statement builds it).
  APPOINTMENT_EVENTS["booking.created"].parse({ object: appointment });
  const [outcome] = await sql<{ key_ok: boolean; visible: boolean; booked: boolean; deliveries: number; earlier: string | null }>(BOOK_SQL, [
    JSON.stringify(appointment),
    call?.tool ?? null,
    call?.id ?? null,
    databaseKind() === "postgres",
    ...eventOrigin(),
    keyToConfirm,
  ]);
  if (!outcome.key_ok) throw new StaleKeyError();
  if (outcome.booked) {
    if (outcome.deliveries > 0) signalOutboxWrite();
    return { booked: appointment };
  }
  if (call && (outcome.earlier !== null || outcome.visible)) return { earlier: outcome.earlier };
  throw notFound();
}

/**
 * The body with its `customer_phone` in the stored form, E.164 (a 400 naming the field when it is
 * not a valid number): one customer's appointments are found by one value, whoever wrote them how
 * (an erasure, docs/data-rights.md).
 */
function withStoredPhone<T extends { customer_phone?: string }>(input: T): T {
  return input.customer_phone === undefined ? input : { ...input, customer_phone: normalizePhoneField("customer_phone", input.customer_phone) };
}

export async function updateAppointment(db: TenantDb, input: UpdateAppointmentInput): Promise<Appointment> {
  const { id, ...patch } = withStoredPhone(input);
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Appointment", id))) throw notFound();
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
