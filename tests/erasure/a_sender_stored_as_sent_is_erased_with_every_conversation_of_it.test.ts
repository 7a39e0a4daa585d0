// A sender intake stored as the provider sent it (a short code, an alphanumeric id) or as a
// possible-but-unlisted number is a customer like any other: erasing one of their conversations
// by id finds every conversation of that identifier (each channel) and erases their messages and
// calls; their next message starts a new conversation, marked as before.
// Erasing by `customer_identifier`, written as the provider sent it, finds them too; an identifier
// that is no phone number, no email and no stored sender stays the 400 it was.
import { describe, expect, it } from "vitest";
import { AppError } from "../../server/lib/errors";
import { getDb } from "../../server/db/client";
import { ingestInboundMessage } from "../../server/conversations/ingest";
import { applyCallReport } from "../../server/calls/calls.service";
import { eraseCustomer } from "../../server/erasure/erasure.service";
import { ERASED } from "../../server/erasure/erasure.types";
import { OPERATOR } from "../../server/audit/record-audit";
import { newTenant } from "../helpers/api";
import { tenantDb } from "../helpers/conversations";

describe("erasing a sender that is no normalized phone number", () => {
  it.each(
    (["conversation_id", "customer_identifier"] as const).flatMap((by) => [
      ["a_short_code", by, "72455", "72455", "as_sent"],
      ["an_alphanumeric_id", by, "MarinaBank", "MarinaBank", "as_sent"],
      ["an_unlisted_number", by, "+971 51 765 4321", "+971517654321", "normalized"],
    ]),
  )("%s_is_erased_on_every_channel_by_its_%s", async (what, by, sent, identifier, kind) => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const message = (id: string, channel: "sms" | "whatsapp") =>
      ingestInboundMessage(db, { provider: "twilio", providerMessageId: `SM${what}${by}${id}${process.pid}`, channel, from: sent, body: `Hello from ${sent}` });
    const sms = await message("1", "sms");
    await message("2", "whatsapp");
    const start = new Date("2026-11-21T09:00:00Z");
    const call = await applyCallReport(db, {
      provider: "retell",
      providerCallId: `call_${what}_${by}_${process.pid}`,
      direction: "inbound",
      customerNumber: sent,
      startedAt: start,
      answeredAt: start,
      ended: { at: new Date(start.getTime() + 30_000), answered: true, reason: "user_hangup" },
      summary: `Caller ${sent} asked for a callback.`,
      transcript: [{ role: "customer", text: "Call me back please.", at: new Date(start.getTime() + 3000) }],
    });
    const raw = await getDb();
    const conversations = await raw.conversation.findMany({ where: { tenantId }, orderBy: { channel: "asc" } });
    expect(conversations.map((c) => [c.channel, c.customerIdentifier, c.customerIdentifierKind])).toEqual([
      ["sms", identifier, kind],
      ["voice", identifier, kind],
      ["whatsapp", identifier, kind],
    ]);

    const erased = await eraseCustomer(db, by === "conversation_id" ? { conversation_id: sms.conversationId! } : { customer_identifier: sent }, OPERATOR);
    expect(erased.status).toBe("erased");
    expect(new Set(erased.conversation_ids)).toEqual(new Set(conversations.map((c) => c.id)));
    expect(erased.call_ids).toEqual([call.call.id]);
    const after = await raw.conversation.findMany({ where: { tenantId } });
    expect(after.map((c) => c.customerIdentifier).sort()).toEqual(conversations.map((c) => `erased:${c.id}`).sort());
    expect((await raw.message.findMany({ where: { tenantId } })).map((m) => m.body)).toEqual([ERASED, ERASED, ERASED]);
    expect(await raw.call.findFirstOrThrow({ where: { id: call.call.id } })).toMatchObject({ summary: null });

    // The same sender writes again: a new conversation, stored as before.
    const again = await message("3", "sms");
    expect(again.conversationCreated).toBe(true);
    expect(await raw.conversation.findFirstOrThrow({ where: { id: again.conversationId! } })).toMatchObject({
      customerIdentifier: identifier,
      customerIdentifierKind: kind,
      messageCount: 1,
    });
  });

  it.each([
    ["a_word_no_sender_was_stored_as", "NotACustomer"],
    ["a_number_nobody_wrote_from", "+971 51 000 0000"],
  ])("%s_is_the_400_naming_the_field", async (_what, identifier) => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const error = await eraseCustomer(db, { customer_identifier: identifier }, OPERATOR).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect([(error as AppError).status, (error as AppError).message]).toEqual([
      400,
      "invalid field 'customer_identifier': not a valid phone number (with its country code, e.g. +971501234567) or email address",
    ]);
  });
});
