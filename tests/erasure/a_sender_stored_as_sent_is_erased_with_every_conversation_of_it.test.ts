// A sender intake stored as the provider sent it (a short code, an alphanumeric id) or as a
// possible-but-unlisted number is a customer like any other: erasing one of their conversations
// by id finds every conversation of that identifier (each channel) and erases their messages and
// calls; their next message starts a new conversation, marked as before.
// (By `customer_identifier`, an erasure reads a valid phone number or an email address only: see
// docs/channels.md, "Senders that are no phone number".)
import { describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { ingestInboundMessage } from "../../server/conversations/ingest";
import { applyCallReport } from "../../server/calls/calls.service";
import { eraseCustomer } from "../../server/erasure/erasure.service";
import { ERASED } from "../../server/erasure/erasure.types";
import { OPERATOR } from "../../server/audit/record-audit";
import { newTenant } from "../helpers/api";
import { tenantDb } from "../helpers/conversations";

describe("erasing a sender that is no normalized phone number", () => {
  it.each([
    ["a_short_code", "72455", "72455", "as_sent"],
    ["an_alphanumeric_id", "MarinaBank", "MarinaBank", "as_sent"],
    ["an_unlisted_number", "+971 51 765 4321", "+971517654321", "normalized"],
  ])("%s_is_erased_on_every_channel_by_one_conversation_id", async (what, sent, identifier, kind) => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const message = (id: string, channel: "sms" | "whatsapp") =>
      ingestInboundMessage(db, { provider: "twilio", providerMessageId: `SM${what}${id}${process.pid}`, channel, from: sent, body: `Hello from ${sent}` });
    const sms = await message("1", "sms");
    await message("2", "whatsapp");
    const start = new Date("2026-11-21T09:00:00Z");
    const call = await applyCallReport(db, {
      provider: "retell",
      providerCallId: `call_${what}_${process.pid}`,
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

    const erased = await eraseCustomer(db, { conversation_id: sms.conversationId! }, OPERATOR);
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
});
