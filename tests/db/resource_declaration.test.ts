// One declaration per resource (server/db/resource.ts): the SQL select list answers exactly what
// `toWire` makes of the same row (for every resource that has one), `patchToColumns` maps wire
// fields to their columns, and a column that is not in the model (or a wire type that does not fit
// the column) does not compile.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Prisma } from "../../server/db/generated/client";
import { openDatabase } from "../../server/db/database";
import { resourceFields } from "../../server/db/resource";
import { offeringResource } from "../../server/offerings/offerings.types";
import { appointmentResource } from "../../server/appointments/appointments.types";
import { leadResource } from "../../server/leads/leads.types";
import { conversationResource, messageResource } from "../../server/conversations/conversations.types";
import { callResource } from "../../server/calls/calls.types";
import { createOffering } from "../../server/offerings/offerings.service";
import { createAppointment } from "../../server/appointments/appointments.service";
import { createLead } from "../../server/leads/leads.service";
import { applyCallReport } from "../../server/calls/calls.service";
import { createConversation } from "../../server/conversations/conversations.service";
import { newTenant } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";

type OfferingRow = Prisma.OfferingGetPayload<object>;

describe("resource declaration", () => {
  it("refuses_at_compile_time_a_column_that_is_not_in_the_model", () => {
    const column = resourceFields<OfferingRow>();
    // @ts-expect-error `headline` is not a column of the Offering model
    const wrong = column.value("headline", z.string());
    expect(wrong.column).toBe("headline");
    // @ts-expect-error a number cannot be the wire type of a text column
    column.value("title", z.number());
    // @ts-expect-error a timestamp of a non-null column is never null on the wire
    column.timestamp("createdAt", z.string().nullable());
    // @ts-expect-error a patch may only name wire fields the resource declares as patchable
    offeringResource.patchToColumns({ created_at: "2026-01-01T00:00:00.000Z" }).createdAt;
  });

  it("maps_patchable_wire_fields_to_columns_converting_dates_and_keeping_null_and_skipping_undefined", () => {
    expect(offeringResource.patchToColumns({ title_ar: null, price: "12.50", available_from: "2026-02-03", address: undefined })).toEqual({
      titleAr: null,
      price: "12.50",
      availableFrom: new Date("2026-02-03T00:00:00.000Z"),
    });
    expect(offeringResource.patchToColumns({ available_from: null })).toEqual({ availableFrom: null });
    expect(appointmentResource.patchToColumns({ scheduled_start: "2026-11-21T12:00:00+02:00", status: "cancelled" })).toEqual({
      scheduledStart: new Date("2026-11-21T10:00:00.000Z"),
      status: "cancelled",
    });
  });

  it("answers_in_sql_exactly_what_to_wire_makes_of_the_same_row_for_every_resource", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const offering = await createOffering(db, {
      title: "Villa",
      title_ar: "فيلا",
      price: "1500000.50",
      price_currency: "AED",
      attributes: { bedrooms: 4 },
      available_from: "2026-12-01",
    });
    const { conversation } = await createConversation(db, { channel: "sms", customer_identifier: uniquePhone() });
    const appointment = await createAppointment(db, {
      customer_name: "Layla",
      customer_phone: "+971501234567",
      scheduled_start: "2026-11-25T10:00:00.000Z",
      scheduled_end: "2026-11-25T11:00:00.000Z",
      offering_id: offering.id,
    });
    const lead = await createLead(db, { conversation_id: conversation.id, customer_name: "Layla", attributes: { budget: 2 } });
    const { call } = await applyCallReport(db, {
      provider: "retell",
      providerCallId: `call_${process.pid}_${Date.now()}`,
      direction: "inbound",
      customerNumber: uniquePhone(),
      startedAt: new Date("2026-11-21T10:00:00.123Z"),
      ended: { at: new Date("2026-11-21T10:01:00.000Z"), answered: true, reason: "user_hangup" },
      transcript: [{ role: "customer", text: "Hello", at: new Date("2026-11-21T10:00:05.000Z") }],
    });
    const message = await (await openDatabase()).prisma.message.findFirstOrThrow({ where: { conversationId: call.conversationId } });

    const raw = (await openDatabase()).prisma;
    const sql = (await openDatabase()).writes;
    const cases = [
      { resource: offeringResource, table: "offerings", row: await raw.offering.findUniqueOrThrow({ where: { id: offering.id } }) },
      { resource: appointmentResource, table: "appointments", row: await raw.appointment.findUniqueOrThrow({ where: { id: appointment.id } }) },
      { resource: leadResource, table: "leads", row: await raw.lead.findUniqueOrThrow({ where: { id: lead.id } }) },
      { resource: conversationResource, table: "conversations", row: await raw.conversation.findUniqueOrThrow({ where: { id: conversation.id } }) },
      { resource: callResource, table: "calls", row: call },
      { resource: messageResource, table: "messages", row: message },
    ];
    for (const { resource, table, row } of cases) {
      const [fromSql] = await sql<Record<string, unknown>>({ text: `SELECT ${resource.sqlSelect} FROM ${table} t WHERE t.id = $1::uuid` }, [row.id]);
      // The same bytes on the wire: JSON text of both, keys in the declared order.
      expect(JSON.stringify(fromSql), table).toBe(JSON.stringify((resource.toWire as (r: unknown) => unknown)(row)));
    }
  });
});
