// Erasing one customer (GDPR art. 17): their personal values are removed or irreversibly redacted in
// every table, in one transaction, while ids, timestamps, statuses and aggregates stay.
//
// Who the customer is: every conversation of the normalised identifier (any channel), or the one
// conversation named, and the leads and appointments of those conversations or carrying that phone
// or email (a phone stored as written before phones were normalized counts as its E.164 form:
// idsByWrittenPhone). The phone numbers and emails those records hold are the same customer's, so their
// conversations are erased too (a bounded closure), and every such value (names too) is redacted
// wherever else it was stored: event payloads, webhook delivery logs, notifications, audit details,
// the assistant's tool answers and stored `Idempotency-Key` answers.
//
// Against a message arriving at the same moment: the customer's conversation rows are locked
// (FOR UPDATE, in id order) before anything is read, the lock every ingest path takes on the
// conversation before it inserts a message. A message committed first is then read and erased; one
// that waited for the lock finds the conversation no longer carries the identifier and starts a new
// one, kept whole. Nothing is half-erased: the whole erasure commits or rolls back, so an interrupted
// one is simply run again (it is idempotent: a second run finds the records erased and emits nothing).
import { Prisma } from "../db/generated/client";
import { modelColumns, TABLE } from "../db/columns";
import { lockTenantRow } from "../db/lock-row";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { badRequest, notFound } from "../lib/errors";
import { normalizeCustomerIdentifier, normalizePhone, phoneParts } from "../lib/customer-identifier";
import { senderIdentifier } from "../lib/sender-identifier";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { eventEmitter } from "../outbox/emit-event";
import { ERASURE_EVENTS } from "./erasure.events";
import { ERASED, ERASED_IDENTIFIER_PREFIX, type EraseCustomerInput, type ErasedRecords, type ErasureResult } from "./erasure.types";
import { redactJson, redactText, valuePattern } from "./redact-json";

const emitEvent = eventEmitter(ERASURE_EVENTS);
/** An event's wire id (as server/events/catalog.ts writes it). */
const eventWireId = (id: string) => `evt_${id}`;

/** An erasure of a customer with a very long history still finishes in one transaction. */
const ERASURE_TRANSACTION = { maxWait: 10_000, timeout: 300_000 } as const;
/** Rounds of the closure over the identifiers the customer's records carry. */
const MAX_CLOSURE_ROUNDS = 4;
/** Rows read and redacted per statement in the scans of stored JSON. */
const BATCH = 500;
/** Patterns per scan statement. */
const PATTERNS_PER_SCAN = 50;
/** Names shorter than this are not searched for outside the customer's own records (too many false hits). */
const MIN_NAME_LENGTH = 3;

const FIELD = "customer_identifier";

/**
 * The stored form of an identifier given by the caller: E.164 for a phone number, lower-case for an
 * email, or a sender as intake stores it (`onlyIfStored`: erased if found, else the 400).
 */
function normaliseErasureIdentifier(raw: string): { identifier: string; onlyIfStored: boolean } {
  const trimmed = raw.trim();
  if (!trimmed) throw badRequest(`invalid field '${FIELD}': must not be blank`, FIELD);
  try {
    if (trimmed.includes("@")) return { identifier: normalizeCustomerIdentifier("email", trimmed), onlyIfStored: false };
  } catch {
    throw invalidIdentifier();
  }
  const phone = normalizePhone(trimmed);
  if (phone !== null) return { identifier: phone, onlyIfStored: false };
  // Not a valid number: it may still be a sender intake stored as its provider sent it (an unlisted
  // `+digits` number, a short code, an alphanumeric id). Such input is the 400 unless one was stored.
  const sender = senderIdentifier(trimmed);
  if (!sender) throw invalidIdentifier();
  return { identifier: sender.identifier, onlyIfStored: true };
}

const invalidIdentifier = () =>
  badRequest(`invalid field '${FIELD}': not a valid phone number (with its country code, e.g. +971501234567) or email address`, FIELD);

const isErasedIdentifier = (identifier: string) => identifier.startsWith(ERASED_IDENTIFIER_PREFIX);

/** The identifier forms a lead's or appointment's phone or email may be matched by. */
function identifierForms(value: string | null | undefined): string[] {
  if (!value || value === ERASED) return [];
  const trimmed = value.trim();
  if (!trimmed) return [];
  if (trimmed.includes("@")) return [trimmed.toLowerCase()];
  const e164 = normalizePhone(trimmed);
  return e164 ? [e164] : [trimmed];
}

type Found = {
  conversations: Map<string, { createdAt: Date; erased: boolean }>;
  identifiers: Set<string>;
  /** Every personal value seen (as stored): what is redacted in the free-form places. */
  values: Set<string>;
  names: Set<string>;
};

export async function eraseCustomer(db: TenantDb, input: EraseCustomerInput, actor: AuditActor): Promise<ErasureResult> {
  const byIdentifier = input.customer_identifier !== undefined ? normaliseErasureIdentifier(input.customer_identifier) : null;
  return db.$transaction(async (tx) => {
    const found: Found = { conversations: new Map(), identifiers: new Set(), values: new Set(), names: new Set() };
    if (input.conversation_id !== undefined) {
      if (!(await lockTenantRow(tx, "Conversation", input.conversation_id))) throw notFound();
      const row = await tx.conversation.findFirstOrThrow({ where: { id: input.conversation_id } });
      found.conversations.set(row.id, { createdAt: row.createdAt, erased: isErasedIdentifier(row.customerIdentifier) });
      if (!isErasedIdentifier(row.customerIdentifier)) found.identifiers.add(row.customerIdentifier);
    } else if (byIdentifier) {
      found.identifiers.add(byIdentifier.identifier);
    }
    const { leads, appointments } = await findCustomer(tx, found);
    if (byIdentifier?.onlyIfStored && found.conversations.size === 0 && leads.length === 0 && appointments.length === 0) throw invalidIdentifier();

    const live = [...found.conversations].filter(([, c]) => !c.erased).map(([id]) => id);
    const nothingLive = live.length === 0 && leads.length === 0 && appointments.length === 0;
    if (nothingLive) {
      const status = found.conversations.size > 0 ? "already_erased" : "nothing_found";
      return emptyResult(status, [...found.conversations.keys()]);
    }

    const records = await redactRecords(tx, live, leads, appointments);
    const since = earliest([
      ...[...found.conversations.values()].map((c) => c.createdAt),
      ...leads.map((l) => l.createdAt),
      ...appointments.map((a) => a.createdAt),
    ]);
    const ids = [...records.conversation_ids, ...records.lead_ids, ...records.appointment_ids];
    const values = [...found.values, ...[...found.names].filter((n) => n.length >= MIN_NAME_LENGTH)];
    const redacted = await redactStoredJson(tx, since, ids, values);
    const { eventId } = await emitEvent(tx, "customer.erased", { object: records });
    await recordAudit(tx, {
      ...actor,
      action: "customer.erased",
      targetType: "customer",
      targetId: records.conversation_ids[0] ?? records.lead_ids[0] ?? records.appointment_ids[0] ?? null,
      // Counts and ids only: never an erased value.
      details: {
        by: input.conversation_id !== undefined ? "conversation_id" : "customer_identifier",
        event_id: eventWireId(eventId),
        conversations: records.conversation_ids.length,
        messages: records.message_ids.length,
        calls: records.call_ids.length,
        leads: records.lead_ids.length,
        appointments: records.appointment_ids.length,
        csat_responses: records.csat_response_ids.length,
        ...redacted,
      },
    });
    return { status: "erased", event_id: eventWireId(eventId), ...records, redacted };
  }, ERASURE_TRANSACTION);
}

function emptyResult(status: "already_erased" | "nothing_found", conversationIds: string[]): ErasureResult {
  return {
    status,
    event_id: null,
    conversation_ids: conversationIds,
    message_ids: [],
    call_ids: [],
    lead_ids: [],
    appointment_ids: [],
    csat_response_ids: [],
    redacted: { events: 0, deliveries: 0, notifications: 0, audit_entries: 0, tool_calls: 0, idempotent_responses: 0 },
  };
}

const earliest = (dates: Date[]) => new Date(Math.min(...dates.map((d) => d.getTime())) - 60_000);

type LeadRow = { id: string; conversationId: string; customerName: string | null; customerPhone: string | null; customerEmail: string | null; createdAt: Date };
type AppointmentRow = { id: string; customerName: string; customerPhone: string; customerEmail: string | null; createdAt: Date };

/**
 * The customer's conversations (locked, in id order), leads and appointments: from the identifiers
 * known, then again from the phones and emails those records carry, until nothing new is found.
 */
async function findCustomer(tx: TenantTx, found: Found): Promise<{ leads: LeadRow[]; appointments: AppointmentRow[] }> {
  const leads = new Map<string, LeadRow>();
  const appointments = new Map<string, AppointmentRow>();
  for (let round = 0; round < MAX_CLOSURE_ROUNDS; round++) {
    const before = found.identifiers.size;
    const identifiers = [...found.identifiers];
    for (const v of identifiers) found.values.add(v);
    const matching = await tx.conversation.findMany({ where: { customerIdentifier: { in: identifiers } }, select: { id: true }, orderBy: { id: "asc" } });
    for (const { id } of matching) {
      if (found.conversations.has(id)) continue;
      // Locked before anything of it is read: a message ingested meanwhile is then either already committed or waits.
      if (!(await lockTenantRow(tx, "Conversation", id))) continue;
      const row = await tx.conversation.findFirst({ where: { id } });
      if (!row || isErasedIdentifier(row.customerIdentifier)) continue;
      found.conversations.set(id, { createdAt: row.createdAt, erased: false });
    }
    const live = [...found.conversations].filter(([, c]) => !c.erased).map(([id]) => id);
    for (const { customerName } of await tx.conversation.findMany({ where: { id: { in: live } }, select: { customerName: true } })) {
      if (customerName) found.names.add(customerName);
    }
    const byValue = [{ customerPhone: { in: identifiers } }, { customerEmail: { in: identifiers, mode: "insensitive" as const } }];
    for (const lead of await tx.lead.findMany({
      where: { OR: [{ conversationId: { in: live } }, { id: { in: await idsByWrittenPhone(tx, "Lead", identifiers) } }, ...byValue] },
      select: { id: true, conversationId: true, customerName: true, customerPhone: true, customerEmail: true, createdAt: true },
    })) {
      if (leads.has(lead.id)) continue;
      leads.set(lead.id, lead);
      collect(found, lead);
    }
    for (const appointment of await tx.appointment.findMany({
      where: { OR: [{ conversationId: { in: live } }, { id: { in: await idsByWrittenPhone(tx, "Appointment", identifiers) } }, ...byValue] },
      select: { id: true, customerName: true, customerPhone: true, customerEmail: true, createdAt: true },
    })) {
      if (appointments.has(appointment.id) || appointment.customerPhone === ERASED) continue;
      appointments.set(appointment.id, appointment);
      collect(found, appointment);
    }
    if (found.identifiers.size === before) break;
  }
  return { leads: [...leads.values()], appointments: [...appointments.values()] };
}

const LEAD = modelColumns(Prisma.LeadScalarFieldEnum);
const APPOINTMENT = modelColumns(Prisma.AppointmentScalarFieldEnum);
type Phone = { e164: string } & NonNullable<ReturnType<typeof phoneParts>>;
const PHONE_COLUMNS = {
  Lead: { table: TABLE.Lead, c: LEAD },
  Appointment: { table: TABLE.Appointment, c: APPOINTMENT },
} as const;

/**
 * Leads or appointments whose phone was stored as written (before phones were stored in E.164: "+971
 * 50 999 0077", "00971-50-999-0077", "050 999 0077"), and is one of the phone `identifiers` once
 * normalized. The digits of such a spelling end with the number's national digits, which narrows the
 * rows read; each candidate is then normalized as a write would store it (phoneMatches).
 */
async function idsByWrittenPhone(tx: TenantTx, model: keyof typeof PHONE_COLUMNS, identifiers: string[]): Promise<string[]> {
  const phones = identifiers.flatMap((id): Phone[] => {
    const parts = id.startsWith("+") ? phoneParts(id) : null;
    return parts ? [{ e164: id, ...parts }] : [];
  });
  if (phones.length === 0) return [];
  const { table, c } = PHONE_COLUMNS[model];
  const digits = `regexp_replace(${c.customerPhone}, '[^0-9]', '', 'g')`;
  const anyOf = phones.map((_, i) => `${digits} LIKE $${i + 3}`).join(" OR ");
  const rows = await tx.$queryRawUnsafe<{ id: string; phone: string }[]>(
    `SELECT ${c.id}::text AS id, ${c.customerPhone} AS phone FROM ${table}
     WHERE ${c.tenantId} = $1::uuid AND ${c.customerPhone} IS NOT NULL AND ${c.customerPhone} <> $2 AND ${c.customerPhone} !~ '^[+][0-9]+$' AND (${anyOf})`,
    tx.tenantId,
    ERASED,
    ...phones.map((p) => `%${p.nationalNumber}`),
  );
  return rows.filter((row) => phoneMatches(row.phone, phones)).map((row) => row.id);
}

/**
 * A stored spelling is one of `phones` when it normalizes to one (in DEFAULT_PHONE_REGION, as a write
 * does), or, when it cannot be read there (a number without its country code and no region set, or
 * one invalid in the region), when it is that number written in that number's own country.
 */
function phoneMatches(stored: string, phones: Phone[]): boolean {
  const e164 = normalizePhone(stored);
  if (e164 !== null) return phones.some((p) => p.e164 === e164);
  return phones.some((p) => p.country !== undefined && normalizePhone(stored, p.country) === p.e164);
}

function collect(found: Found, row: { customerName: string | null; customerPhone: string | null; customerEmail: string | null }) {
  if (row.customerName && row.customerName !== ERASED) found.names.add(row.customerName);
  for (const raw of [row.customerPhone, row.customerEmail]) {
    if (!raw || raw === ERASED) continue;
    found.values.add(raw.trim());
    for (const form of identifierForms(raw)) found.identifiers.add(form);
  }
}

/** The customer's own rows: personal columns nulled or set to ERASED. */
async function redactRecords(tx: TenantTx, conversationIds: string[], leads: LeadRow[], appointments: AppointmentRow[]): Promise<ErasedRecords> {
  const inConversations = { conversationId: { in: conversationIds } };
  const [messages, calls, csat] = await Promise.all([
    tx.message.findMany({ where: inConversations, select: { id: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    tx.call.findMany({ where: inConversations, select: { id: true }, orderBy: [{ startedAt: "asc" }, { id: "asc" }] }),
    tx.csatResponse.findMany({ where: inConversations, select: { id: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  ]);
  for (const id of conversationIds) {
    await tx.conversation.update({
      where: { id },
      data: { customerIdentifier: `${ERASED_IDENTIFIER_PREFIX}${id}`, customerName: null, summary: null, attributes: {} },
    });
  }
  await tx.message.updateMany({ where: inConversations, data: { body: ERASED } });
  await tx.call.updateMany({ where: inConversations, data: { recordingUrl: null, summary: null } });
  await tx.csatResponse.updateMany({ where: inConversations, data: { comment: null } });
  const leadIds = leads.map((l) => l.id);
  await tx.lead.updateMany({
    where: { id: { in: leadIds } },
    data: { customerName: null, customerPhone: null, customerEmail: null, notes: null, attributes: {} },
  });
  const appointmentIds = appointments.map((a) => a.id);
  await tx.appointment.updateMany({
    where: { id: { in: appointmentIds } },
    data: { customerName: ERASED, customerPhone: ERASED, customerEmail: null, locationText: null },
  });
  return {
    conversation_ids: conversationIds,
    message_ids: messages.map((m) => m.id),
    call_ids: calls.map((c) => c.id),
    lead_ids: leadIds,
    appointment_ids: appointmentIds,
    csat_response_ids: csat.map((c) => c.id),
  };
}

const EVENT = modelColumns(Prisma.EventScalarFieldEnum);
const AUDIT = modelColumns(Prisma.AuditLogScalarFieldEnum);
const NOTIFICATION = modelColumns(Prisma.NotificationScalarFieldEnum);
const TOOL_CALL = modelColumns(Prisma.ToolCallScalarFieldEnum);
const IDEMPOTENT = modelColumns(Prisma.IdempotentResponseScalarFieldEnum);

/** The places personal values are stored as free JSON or text, each with its searchable text. */
const SCANNED = {
  events: { table: TABLE.Event, c: EVENT, text: `${EVENT.data}::text` },
  audit_entries: { table: TABLE.AuditLog, c: AUDIT, text: `${AUDIT.details}::text` },
  notifications: {
    table: TABLE.Notification,
    c: NOTIFICATION,
    text: `${NOTIFICATION.title} || ' ' || ${NOTIFICATION.body} || ' ' || ${NOTIFICATION.data}::text`,
  },
  tool_calls: { table: TABLE.ToolCall, c: TOOL_CALL, text: `coalesce(${TOOL_CALL.result}::text, '')` },
  idempotent_responses: { table: TABLE.IdempotentResponse, c: IDEMPOTENT, text: IDEMPOTENT.body },
} as const;
type Scanned = keyof typeof SCANNED;

const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, "\\$&")}%`;

/** Ids of the tenant's rows of one place, created since `since`, whose text holds one of `needles`. */
async function matchingRows(tx: TenantTx, place: Scanned, since: Date, needles: string[]): Promise<string[]> {
  const { table, c, text } = SCANNED[place];
  const ids = new Set<string>();
  for (let i = 0; i < needles.length; i += PATTERNS_PER_SCAN) {
    const chunk = needles.slice(i, i + PATTERNS_PER_SCAN).map(likePattern);
    const anyOf = chunk.map((_, j) => `(${text}) ILIKE $${j + 3}`).join(" OR ");
    let after: { createdAt: Date; id: string } | null = null;
    for (;;) {
      const keyset: string = after ? ` AND (${c.createdAt}, ${c.id}) > ($${chunk.length + 3}::timestamptz, $${chunk.length + 4}::uuid)` : "";
      const sql: string = `SELECT ${c.id} AS id, ${c.createdAt} AS "createdAt" FROM ${table}
        WHERE ${c.tenantId} = $1::uuid AND ${c.createdAt} >= $2::timestamptz AND (${anyOf})${keyset}
        ORDER BY ${c.createdAt}, ${c.id} LIMIT ${BATCH}`;
      const params: unknown[] = [tx.tenantId, since.toISOString(), ...chunk, ...(after ? [after.createdAt.toISOString(), after.id] : [])];
      const rows: { id: string; createdAt: Date }[] = await tx.$queryRawUnsafe<{ id: string; createdAt: Date }[]>(sql, ...params);
      for (const r of rows) ids.add(r.id);
      if (rows.length < BATCH) break;
      const last: { id: string; createdAt: Date } = rows[rows.length - 1];
      after = { createdAt: new Date(last.createdAt), id: last.id };
    }
  }
  return [...ids];
}

const mentionsAny = (text: string, ids: readonly string[]) => ids.some((id) => text.includes(id));

/**
 * Redacts the customer's values out of every stored JSON and text that holds them, and the webhook
 * delivery logs of each redacted event (the request body becomes the redacted envelope, the
 * consumer's response bodies are dropped). Returns how many rows of each place changed.
 */
async function redactStoredJson(tx: TenantTx, since: Date, ids: string[], values: string[]): Promise<ErasureResult["redacted"]> {
  const pattern = valuePattern(values);
  const needles = [...new Set([...ids, ...values])];
  const out: ErasureResult["redacted"] = { events: 0, deliveries: 0, notifications: 0, audit_entries: 0, tool_calls: 0, idempotent_responses: 0 };
  for (const batch of chunks(await matchingRows(tx, "events", since, needles), BATCH)) {
    for (const event of await tx.event.findMany({ where: { id: { in: batch } } })) {
      const data = redactJson(event.data, pattern, mentionsAny(JSON.stringify(event.data), ids)) as Prisma.InputJsonValue;
      await tx.event.update({ where: { id: event.id }, data: { data } });
      out.events++;
      const envelope = JSON.stringify({
        id: eventWireId(event.id),
        event: event.type,
        created_at: event.createdAt.toISOString(),
        tenant_id: event.tenantId,
        data,
      });
      const deliveries = await tx.webhookDelivery.updateMany({ where: { eventId: event.id }, data: { responseBody: null } });
      const attempts = await tx.webhookAttempt.updateMany({
        where: { delivery: { eventId: event.id } },
        data: { requestBody: envelope.slice(0, 4096), responseBody: null },
      });
      out.deliveries += deliveries.count + attempts.count;
    }
  }
  for (const batch of chunks(await matchingRows(tx, "audit_entries", since, needles), BATCH)) {
    for (const entry of await tx.auditLog.findMany({ where: { id: { in: batch } } })) {
      const details = redactJson(entry.details, pattern, mentionsAny(JSON.stringify(entry.details), ids)) as Prisma.InputJsonValue;
      await tx.auditLog.update({ where: { id: entry.id }, data: { details } });
      out.audit_entries++;
    }
  }
  for (const batch of chunks(await matchingRows(tx, "notifications", since, needles), BATCH)) {
    for (const n of await tx.notification.findMany({ where: { id: { in: batch } } })) {
      const fields = mentionsAny(`${n.title} ${n.body} ${JSON.stringify(n.data)}`, ids);
      const data = redactJson(n.data, pattern, fields) as Prisma.InputJsonValue;
      await tx.notification.update({ where: { id: n.id }, data: { title: redactText(n.title, pattern), body: redactText(n.body, pattern), data } });
      out.notifications++;
    }
  }
  for (const batch of chunks(await matchingRows(tx, "tool_calls", since, needles), BATCH)) {
    for (const call of await tx.toolCall.findMany({ where: { id: { in: batch } } })) {
      if (call.result === null) continue;
      const fields = mentionsAny(JSON.stringify(call.result), ids);
      // book_appointment stores its answer as the JSON text of the appointment (a JSON string): redacted as that JSON.
      const result = (
        typeof call.result === "string" ? redactBody(call.result, pattern, fields) : redactJson(call.result, pattern, fields)
      ) as Prisma.InputJsonValue;
      await tx.toolCall.update({ where: { id: call.id }, data: { result } });
      out.tool_calls++;
    }
  }
  for (const batch of chunks(await matchingRows(tx, "idempotent_responses", since, needles), BATCH)) {
    for (const stored of await tx.idempotentResponse.findMany({ where: { id: { in: batch } } })) {
      await tx.idempotentResponse.update({ where: { id: stored.id }, data: { body: redactBody(stored.body, pattern, mentionsAny(stored.body, ids)) } });
      out.idempotent_responses++;
    }
  }
  return out;
}

/** A stored answer's JSON text redacted (text that is not JSON has the values replaced). */
function redactBody(body: string, pattern: RegExp | null, fields: boolean): string {
  try {
    return JSON.stringify(redactJson(JSON.parse(body), pattern, fields));
  } catch {
    return redactText(body, pattern);
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
