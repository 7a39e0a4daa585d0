// One customer seeded across every table that can hold them, the ways they really arrive: inbound
// messages through intake (ingest), a call with its transcript and recording (the voice receivers'
// core), the assistant's tools (lead, handoff, booking with a tool_call_id, CSAT), the API (a
// conversation created with an Idempotency-Key), webhooks delivered to a real consumer (delivery
// logs with request bodies) and a notification naming them.
import { randomInt } from "node:crypto";
import { getDb } from "../../server/db/client";
import { ingestInboundMessage } from "../../server/conversations/ingest";
import { applyCallReport } from "../../server/calls/calls.service";
import { EVENT_TYPES } from "../../server/events/catalog";
import { call } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { dashboardCaller } from "../helpers/webhooks";
import { tenantDb, uniquePhone } from "../helpers/conversations";

export type Customer = { name: string; phone: string; email: string };

/** A customer with values found nowhere else in the database. */
export function uniqueCustomer(): Customer {
  const tag = `${process.pid}${randomInt(1_000_000)}`;
  return { name: `Zephyrine Quillfeather${tag}`, phone: uniquePhone(), email: `zq.${tag}@example.test` };
}

/** The number as a person writes it: "+971 50 123 4567". */
export const spacedPhone = (e164: string) => `${e164.slice(0, 4)} ${e164.slice(4, 6)} ${e164.slice(6, 9)} ${e164.slice(9)}`;

let seq = 0;

/** Subscribes the tenant to every event at `url` (a loopback consumer: WEBHOOK_ALLOW_LOOPBACK must be on). */
export async function subscribeToEverything(tenantId: string, url: string) {
  return dashboardCaller(tenantId).webhooks.createSubscription({ url, events: EVENT_TYPES as never });
}

/** Seeds the customer in the tenant; `key` needs every scope. Returns the ids made. */
export async function seedCustomer(tenantId: string, key: string, c: Customer) {
  const db = await tenantDb(tenantId);
  const tag = `${process.pid}x${++seq}`;
  // Intake: WhatsApp messages with the profile name, written with spaces as the provider may.
  const whatsapp = await ingestInboundMessage(db, {
    provider: "whatsapp_cloud",
    providerMessageId: `wamid.${tag}a`,
    channel: "whatsapp",
    from: spacedPhone(c.phone),
    customerName: c.name,
    body: `Hello, this is ${c.name}, write to me at ${c.email}`,
  });
  const sms = await ingestInboundMessage(db, {
    provider: "twilio",
    providerMessageId: `SM${tag}b`,
    channel: "sms",
    from: c.phone,
    body: `My number is ${c.phone}`,
  });
  // A call, its transcript and recording.
  const T0 = new Date();
  const report = { provider: "retell" as const, providerCallId: `call_${tag}`, direction: "inbound" as const, customerNumber: c.phone, startedAt: T0 };
  await applyCallReport(db, report);
  const ended = await applyCallReport(db, {
    ...report,
    answeredAt: new Date(T0.getTime() + 1000),
    ended: { at: new Date(T0.getTime() + 60_000), answered: true, reason: "user_hangup" },
    recordingUrl: `https://rec.example.com/${encodeURIComponent(c.phone)}.wav`,
    summary: `${c.name} asked about the villa`,
    transcript: [
      { role: "assistant", text: "Marina Homes, how can I help?", at: new Date(T0.getTime() + 2000) },
      { role: "customer", text: `It's ${c.name}, call me back on ${c.phone}`, at: new Date(T0.getTime() + 4000) },
    ],
  });
  // The API: an email conversation created with an Idempotency-Key (its answer is stored).
  const created = await call("POST", "/conversations", {
    key,
    body: { channel: "email", customer_identifier: c.email, customer_name: c.name, attributes: { email: c.email } },
    headers: { "idempotency-key": `erasure-${tag}` },
  });
  if (created.status !== 201) throw new Error(`POST /conversations: ${created.status} ${created.text}`);
  // The assistant's tools.
  const lead = await callTool(key, "upsert_lead", {
    conversation_id: whatsapp.conversationId as string,
    customer_name: c.name,
    customer_phone: spacedPhone(c.phone),
    customer_email: c.email,
    notes: `${c.name} wants a sea view`,
    attributes: { contact: c.email },
    status: "qualified",
  });
  if (lead.status !== 200) throw new Error(`upsert_lead: ${lead.status} ${lead.text}`);
  const handoff = await callTool(key, "request_handoff", { lead_id: lead.body.id, reason: `${c.name} wants to negotiate` });
  if (handoff.status !== 200) throw new Error(`request_handoff: ${handoff.status} ${handoff.text}`);
  const start = new Date(Date.now() + 86_400_000);
  const booking = await callTool(key, "book_appointment", {
    tool_call_id: `book_${tag}`,
    customer_name: c.name,
    customer_phone: c.phone,
    customer_email: c.email,
    scheduled_start: start.toISOString(),
    scheduled_end: new Date(start.getTime() + 1_800_000).toISOString(),
    conversation_id: whatsapp.conversationId as string,
    lead_id: lead.body.id,
    location_text: `${c.name}'s flat`,
  });
  if (booking.status !== 200) throw new Error(`book_appointment: ${booking.status} ${booking.text}`);
  const csat = await callTool(key, "record_csat", { conversation_id: ended.conversation.id, score: 4, comment: `Thanks from ${c.name}` });
  if (csat.status !== 200) throw new Error(`record_csat: ${csat.status} ${csat.text}`);
  // A notification that names the customer.
  await (await getDb()).notification.create({
    data: {
      tenantId,
      kind: "handoff",
      title: `${c.name} is waiting`,
      body: `Call ${c.phone} or write to ${c.email}`,
      data: { conversation_id: whatsapp.conversationId as string },
    },
  });
  return {
    conversationIds: [whatsapp.conversationId as string, sms.conversationId as string, ended.conversation.id, created.body.id as string],
    leadId: lead.body.id as string,
    appointmentId: booking.body.id as string,
    callId: ended.call.id,
  };
}

/** Every text-like and JSON column of every table, from information_schema. */
async function textColumns(): Promise<{ table: string; column: string; tenantColumn: string | null }[]> {
  const db = await getDb();
  const columns = await db.$queryRawUnsafe<{ table_name: string; column_name: string; data_type: string }[]>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations'
       AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY')`,
  );
  const all = await db.$queryRawUnsafe<{ table_name: string; column_name: string }[]>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  const tenantColumnOf = (table: string) =>
    all.find((c) => c.table_name === table && c.column_name === "tenant_id")?.column_name ??
    all.find((c) => c.table_name === table && c.column_name === "organization_id")?.column_name ??
    null;
  return columns.map((c) => ({ table: c.table_name, column: c.column_name, tenantColumn: tenantColumnOf(c.table_name) }));
}

/**
 * Where any of `needles` appears (case-insensitively) in any text or JSON column of any table,
 * leaving out the rows of the tenants in `exceptTenants`: `table.column` of each hit.
 */
export async function findAnywhere(needles: string[], exceptTenants: string[] = []): Promise<string[]> {
  const db = await getDb();
  const hits: string[] = [];
  for (const { table, column, tenantColumn } of await textColumns()) {
    const except = tenantColumn && exceptTenants.length ? ` AND "${tenantColumn}"::text NOT IN (${exceptTenants.map((t) => `'${t}'`).join(", ")})` : "";
    const anyOf = needles.map((_, i) => `"${column}"::text ILIKE $${i + 1}`).join(" OR ");
    const rows = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "${table}" WHERE (${anyOf})${except}`,
      ...needles.map((n) => `%${n.replace(/[\\%_]/g, "\\$&")}%`),
    );
    if (rows[0].n > 0) hits.push(`${table}.${column} (${rows[0].n})`);
  }
  return hits;
}
