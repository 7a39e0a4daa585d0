// A customer's phone, however it was written, is one customer to an erasure, on both databases.
// Leads and appointments written through every surface (the REST API's creates and PATCHes, the
// assistant's tools, the dashboard's tRPC procedures) with every spelling (spaces, dashes, brackets,
// a 00 prefix, the national form read in DEFAULT_PHONE_REGION) are stored and answered in E.164;
// rows stored as written before that (an existing database: the row and its event's payload) are
// found too, with or without DEFAULT_PHONE_REGION. After erasing by one spelling every text and JSON
// column of every table is scanned for the name, each spelling, the email and the distinctive words,
// and the rows, their events and the tenant's export agree. A number that only shares the national
// digits (another country's) is not the customer's.
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { ERASED } from "../../server/erasure/erasure.types";
import { openTenantExport } from "../../server/export/export";
import { call, dashboardCaller, errorOf, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { makeConversation } from "../helpers/conversations";
import { findAnywhere } from "./seed-customer";

afterEach(() => {
  delete process.env.DEFAULT_PHONE_REGION;
});

/** One customer's number in the spellings people write it in (the last one needs DEFAULT_PHONE_REGION=AE). */
function customer(tag: string, nsn: string) {
  const [a, b, c] = [nsn.slice(0, 2), nsn.slice(2, 5), nsn.slice(5)];
  return {
    name: `Alice Secretwood${tag}`,
    email: `alice.${tag}@example.test`,
    words: `Quillfeather Towers ${tag}`,
    e164: `+971${nsn}`,
    spellings: {
      spaces: `+971 ${a} ${b} ${c}`,
      dashes: `+971-${a}-${b}-${c}`,
      brackets: `+971 (${a}) ${b}-${c}`,
      "00 prefix": `00971 ${a} ${b} ${c}`,
      national: `0${a} ${b} ${c}`,
    } as Record<string, string>,
  };
}
type Customer = ReturnType<typeof customer>;

const START = "2027-01-10T09:00:00.000Z";
const END = "2027-01-10T09:30:00.000Z";
const strangerBody = (phone: string) => ({ customer_name: "Bob Unrelated", customer_phone: phone, scheduled_start: START, scheduled_end: END });
let calls = 0;
/** A valid number of someone else, changed to the customer's spelling by a PATCH. */
const OTHER = "+971501110022";

type Writer = (tenantId: string, key: string, c: Customer, phone: string) => Promise<{ id: string; customer_phone: string | null }>;

const appointmentBody = (c: Customer, phone: string) => ({
  customer_name: c.name,
  customer_phone: phone,
  customer_email: c.email,
  scheduled_start: START,
  scheduled_end: END,
  location_text: `${c.words}, flat 7`,
});

const APPOINTMENT_SURFACES: Record<string, Writer> = {
  "POST /appointments": async (_t, key, c, phone) => ok(await call("POST", "/appointments", { key, body: appointmentBody(c, phone) }), 201),
  "PATCH /appointments/{id}": async (_t, key, c, phone) => {
    const made = ok(await call("POST", "/appointments", { key, body: appointmentBody(c, OTHER) }), 201);
    return ok(await call("PATCH", `/appointments/${made.id}`, { key, body: { customer_phone: phone } }), 200);
  },
  "tool book_appointment": async (_t, key, c, phone) =>
    ok(await callTool(key, "book_appointment", { ...appointmentBody(c, phone), tool_call_id: `book_${++calls}` }), 200),
  "tRPC appointments.create": async (tenantId, _k, c, phone) => dashboardCaller(tenantId).appointments.create(appointmentBody(c, phone)),
  "tRPC appointments.update": async (tenantId, _k, c, phone) => {
    const made = await dashboardCaller(tenantId).appointments.create(appointmentBody(c, OTHER));
    return dashboardCaller(tenantId).appointments.update({ id: made.id, customer_phone: phone });
  },
};

/** A lead on a webchat conversation of its own: found by its phone only, not by its conversation. */
const leadBody = async (tenantId: string, c: Customer, phone: string) => ({
  conversation_id: (await makeConversation(tenantId, "webchat")).id,
  customer_name: c.name,
  customer_phone: phone,
  customer_email: c.email,
  notes: `${c.words}: wants a sea view`,
});

const LEAD_SURFACES: Record<string, Writer> = {
  "POST /leads": async (tenantId, key, c, phone) => ok(await call("POST", "/leads", { key, body: await leadBody(tenantId, c, phone) }), 201),
  "PATCH /leads/{id}": async (tenantId, key, c, phone) => {
    const made = ok(await call("POST", "/leads", { key, body: await leadBody(tenantId, c, OTHER) }), 201);
    return ok(await call("PATCH", `/leads/${made.id}`, { key, body: { customer_phone: phone } }), 200);
  },
  "tool upsert_lead": async (tenantId, key, c, phone) => ok(await callTool(key, "upsert_lead", await leadBody(tenantId, c, phone)), 200),
  "tRPC leads.create": async (tenantId, _k, c, phone) => dashboardCaller(tenantId).leads.create(await leadBody(tenantId, c, phone)),
  "tRPC leads.update": async (tenantId, _k, c, phone) => {
    const made = await dashboardCaller(tenantId).leads.create(await leadBody(tenantId, c, OTHER));
    return dashboardCaller(tenantId).leads.update({ id: made.id, customer_phone: phone });
  },
};

function ok(answer: { status: number; body: any; text: string }, status: number) {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer.body;
}

/** What must be gone after the erasure: the name, every spelling, the E.164 form (with and without +), the email, the words. */
const needlesOf = (c: Customer) => [c.name, c.email, c.words, c.e164, c.e164.slice(1), ...Object.values(c.spellings)];

/** A row and its booking.created / lead.created event as a database from before phones were normalized holds them. */
async function storeAsWritten(model: "appointment" | "lead", id: string, phone: string) {
  const db = await getDb();
  const table = model === "appointment" ? "appointments" : "leads";
  await db.$executeRawUnsafe(`UPDATE ${table} SET customer_phone = $1 WHERE id = $2::uuid`, phone, id);
  const updated = await db.$executeRawUnsafe(
    `UPDATE events SET data = jsonb_set(data, '{object,customer_phone}', to_jsonb($1::text)) WHERE data->'object'->>'id' = $2`,
    phone,
    id,
  );
  expect(updated).toBeGreaterThan(0);
}

async function exportText(tenantId: string): Promise<string> {
  const lines = await openTenantExport(tenantId);
  let text = "";
  for await (const line of lines!) text += line;
  return text;
}

/** Erases by `identifier` and checks that rows, events and the export agree that nothing of `c` is left. */
async function eraseAndScan(tenantId: string, key: string, c: Customer, identifier: string, appointmentIds: string[], leadIds: string[]) {
  const erased = await call("POST", "/privacy/erasures", { key, body: { customer_identifier: identifier } });
  expect(erased.status).toBe(200);
  expect(erased.body.status).toBe("erased");
  expect([...erased.body.appointment_ids].sort()).toEqual([...appointmentIds].sort());
  expect([...erased.body.lead_ids].sort()).toEqual([...leadIds].sort());

  expect(await findAnywhere(needlesOf(c))).toEqual([]);
  const db = await getDb();
  for (const id of appointmentIds) {
    const read = await call("GET", `/appointments/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ customer_name: ERASED, customer_phone: ERASED, customer_email: null, location_text: null });
    const [created] = await db.event.findMany({ where: { tenantId, type: "booking.created", data: { path: ["object", "id"], equals: id } } });
    expect(created.data).toMatchObject({ object: { id, customer_name: ERASED, customer_phone: ERASED, location_text: ERASED } });
  }
  for (const id of leadIds) {
    const read = await call("GET", `/leads/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ customer_name: null, customer_phone: null, customer_email: null, notes: null });
  }
  const exported = await exportText(tenantId);
  for (const needle of needlesOf(c)) expect(exported.toLowerCase()).not.toContain(needle.toLowerCase());
  for (const id of [...appointmentIds, ...leadIds]) expect(exported).toContain(id);
}

describe("an erasure finds a customer's phone however it was written", () => {
  it("every surface stores every spelling in E.164 and an erasure by one spelling leaves nothing of the customer anywhere", async () => {
    process.env.DEFAULT_PHONE_REGION = "AE";
    const { tenantId, key } = await tenantWithKey();
    const c = customer("one", "509990077");
    const appointmentIds: string[] = [];
    const leadIds: string[] = [];
    for (const [surface, write] of Object.entries(APPOINTMENT_SURFACES)) {
      for (const [spelling, phone] of Object.entries(c.spellings)) {
        const written = await write(tenantId, key, c, phone);
        expect(written.customer_phone, `${surface}, ${spelling}`).toBe(c.e164);
        appointmentIds.push(written.id);
      }
    }
    for (const [surface, write] of Object.entries(LEAD_SURFACES)) {
      for (const [spelling, phone] of Object.entries(c.spellings)) {
        const written = await write(tenantId, key, c, phone);
        expect(written.customer_phone, `${surface}, ${spelling}`).toBe(c.e164);
        leadIds.push(written.id);
      }
    }
    const db = await getDb();
    expect(new Set((await db.appointment.findMany({ where: { tenantId } })).map((a) => a.customerPhone))).toEqual(new Set([c.e164]));
    expect(new Set((await db.lead.findMany({ where: { tenantId } })).map((l) => l.customerPhone))).toEqual(new Set([c.e164]));
    // The events carry what the rows held then (a PATCH's row was made with the other number first).
    const phonesIn = async (type: string) =>
      new Set((await db.event.findMany({ where: { tenantId, type } })).map((e) => (e.data as { object: { customer_phone: string } }).object.customer_phone));
    expect(await phonesIn("booking.created")).toEqual(new Set([c.e164, OTHER]));
    expect(await phonesIn("lead.created")).toEqual(new Set([c.e164, OTHER]));
    expect(await phonesIn("lead.updated")).toEqual(new Set([c.e164]));

    // Rows from before: stored as written, each spelling, with their events as written then.
    for (const phone of Object.values(c.spellings)) {
      const appointment = ok(await call("POST", "/appointments", { key, body: appointmentBody(c, c.e164) }), 201);
      await storeAsWritten("appointment", appointment.id, phone);
      appointmentIds.push(appointment.id);
      const lead = ok(await call("POST", "/leads", { key, body: await leadBody(tenantId, c, c.e164) }), 201);
      await storeAsWritten("lead", lead.id, phone);
      leadIds.push(lead.id);
    }
    // Someone else whose number ends with the same digits, stored as written.
    const stranger = ok(await call("POST", "/appointments", { key, body: strangerBody("+16509990077") }), 201);
    await storeAsWritten("appointment", stranger.id, "+1 (650) 999-0077");

    await eraseAndScan(tenantId, key, c, c.spellings.spaces, appointmentIds, leadIds);
    expect(await db.appointment.findFirstOrThrow({ where: { id: stranger.id } })).toMatchObject({
      customerName: "Bob Unrelated",
      customerPhone: "+1 (650) 999-0077",
    });
  }, 120_000);

  it("rows stored as written before are found without DEFAULT_PHONE_REGION too, and a national form by the customer's own country", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = customer("two", "509990088");
    const appointmentIds: string[] = [];
    const leadIds: string[] = [];
    for (const phone of Object.values(c.spellings)) {
      const appointment = ok(await call("POST", "/appointments", { key, body: appointmentBody(c, c.e164) }), 201);
      await storeAsWritten("appointment", appointment.id, phone);
      appointmentIds.push(appointment.id);
      const lead = ok(await call("POST", "/leads", { key, body: await leadBody(tenantId, c, c.e164) }), 201);
      await storeAsWritten("lead", lead.id, phone);
      leadIds.push(lead.id);
    }
    const stranger = ok(await call("POST", "/appointments", { key, body: strangerBody("+16509990088") }), 201);
    await storeAsWritten("appointment", stranger.id, "650 999 0088");

    await eraseAndScan(tenantId, key, c, c.spellings["00 prefix"], appointmentIds, leadIds);
    expect(await (await getDb()).appointment.findFirstOrThrow({ where: { id: stranger.id } })).toMatchObject({ customerPhone: "650 999 0088" });
  }, 120_000);

  it("a phone that is not a valid number is a 400 naming customer_phone on every surface, and a blank lead phone is none", async () => {
    const { tenantId, key } = await tenantWithKey();
    const c = customer("three", "509990099");
    const hint = "invalid field 'customer_phone': not a valid phone number with its country code, e.g. +971501234567";
    for (const phone of ["not a phone", "+97150123", c.spellings.national]) {
      const posted = await call("POST", "/appointments", { key, body: appointmentBody(c, phone) });
      expect(posted.status, phone).toBe(400);
      expect(posted.body).toEqual(errorOf("bad_request", hint));
      const booked = await callTool(key, "book_appointment", { ...appointmentBody(c, phone), tool_call_id: `bad_${phone}` });
      expect(booked.status).toBe(400);
      expect(booked.body).toEqual(errorOf("bad_request", hint));
      const lead = await call("POST", "/leads", { key, body: await leadBody(tenantId, c, phone) });
      expect(lead.status).toBe(400);
      expect(lead.body).toEqual(errorOf("bad_request", hint));
      await expect(dashboardCaller(tenantId).leads.create(await leadBody(tenantId, c, phone))).rejects.toMatchObject({ code: "BAD_REQUEST", message: hint });
    }
    process.env.DEFAULT_PHONE_REGION = "AE";
    const made = ok(await call("POST", "/appointments", { key, body: appointmentBody(c, c.e164) }), 201);
    const patched = await call("PATCH", `/appointments/${made.id}`, { key, body: { customer_phone: "050 123" } });
    expect(patched.status).toBe(400);
    expect(patched.body).toEqual(errorOf("bad_request", "invalid field 'customer_phone': not a valid phone number"));
    // Nothing was written by the refused calls.
    const db = await getDb();
    expect(await db.appointment.count({ where: { tenantId } })).toBe(1);
    expect(await db.lead.count({ where: { tenantId } })).toBe(0);
    expect(await db.toolCall.count({ where: { tenantId } })).toBe(0);

    const blank = ok(await call("POST", "/leads", { key, body: await leadBody(tenantId, c, "  ") }), 201);
    expect(blank.customer_phone).toBeNull();
  });
});
