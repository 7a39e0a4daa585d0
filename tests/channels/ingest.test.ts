// Ingest of inbound messages (the receivers' core), on both databases: the conversation is found or
// created by POST /conversations' own rule, the message is stored and counted once however often
// and however concurrently the provider delivers it, a closed conversation reopens, and the first
// inbound message of a new pair emits `conversation.created` exactly once.
import { describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { ingestInboundMessage, type InboundMessage } from "../../server/conversations/ingest";
import { createConversation, updateConversation } from "../../server/conversations/conversations.service";
import { eraseCustomer } from "../../server/erasure/erasure.service";
import { ERASED } from "../../server/erasure/erasure.types";
import { OPERATOR } from "../../server/audit/record-audit";
import { newTenant } from "../helpers/api";
import { eventsOf, tenantDb, uniquePhone } from "../helpers/conversations";

let seq = 0;
const inbound = (from: string, extra: Partial<InboundMessage> = {}): InboundMessage => ({
  provider: "twilio",
  providerMessageId: `SM${process.pid}x${++seq}`,
  channel: "sms",
  from,
  body: "Is the villa still available?",
  ...extra,
});

const conversationRow = async (id: string) => (await getDb()).conversation.findUniqueOrThrow({ where: { id } });

async function messageRows(tenantId: string) {
  return (await getDb()).message.findMany({ where: { tenantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

describe("ingest of inbound messages", () => {
  it("one_message_one_event_when_the_same_provider_message_is_ingested_5_times_concurrently", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const message = inbound(uniquePhone());
    const results = await Promise.all(Array.from({ length: 5 }, () => ingestInboundMessage(db, message)));

    expect(results.filter((r) => r.stored)).toHaveLength(1);
    expect(results.filter((r) => r.conversationCreated)).toHaveLength(1);
    const rows = await messageRows(tenantId);
    expect(rows.map((m) => [m.direction, m.author, m.status, m.body, m.provider, m.providerMessageId])).toEqual([
      ["inbound", "customer", "received", message.body, "twilio", message.providerMessageId],
    ]);
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["conversation.created"]);
    const conversation = await (await getDb()).conversation.findFirstOrThrow({ where: { tenantId } });
    expect(conversation).toMatchObject({ messageCount: 1, lastMessageAt: rows[0].createdAt, status: "open" });
  });

  it("one_conversation_one_created_event_for_20_concurrent_first_messages_from_a_new_customer", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    // The provider writes the number in several ways; the normalized pair is one customer.
    const forms = [phone, `${phone.slice(0, 4)} ${phone.slice(4, 6)} ${phone.slice(6)}`, `${phone.slice(0, 4)}-${phone.slice(4, 6)}-${phone.slice(6)}`];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ingestInboundMessage(db, inbound(forms[i % forms.length], { body: `message ${i}` }))),
    );

    const conversations = await (await getDb()).conversation.findMany({ where: { tenantId } });
    expect(conversations.map((c) => [c.channel, c.customerIdentifier, c.messageCount])).toEqual([["sms", phone, 20]]);
    expect(new Set(results.map((r) => r.conversationId))).toEqual(new Set([conversations[0].id]));
    expect(results.filter((r) => r.conversationCreated)).toHaveLength(1);
    const created = await eventsOf(tenantId, "conversation.created");
    expect(created).toHaveLength(1);
    expect(created[0].data.object).toMatchObject({ id: conversations[0].id, channel: "sms", customer_identifier: phone });
    expect((await messageRows(tenantId)).map((m) => m.body).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `message ${i}`).sort());
  });

  it("no_event_for_a_pair_pre_created_by_post_conversations_and_the_message_counts_on_it", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    const { conversation } = await createConversation(db, { channel: "whatsapp", customer_identifier: phone });
    const result = await ingestInboundMessage(db, inbound(phone, { channel: "whatsapp", provider: "whatsapp_cloud", customerName: "Layla" }));
    expect(result).toEqual({ conversationCreated: false, conversationId: conversation.id, stored: true });
    expect(await conversationRow(conversation.id)).toMatchObject({ messageCount: 1, customerName: null });
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["conversation.created"]); // POST's own, only
  });

  it("a_closed_conversation_reopens_and_a_handoff_stays_a_handoff", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    const first = await ingestInboundMessage(db, inbound(phone));
    const id = first.conversationId!;
    await updateConversation(db, { id, status: "closed" });
    const reopened = await ingestInboundMessage(db, inbound(phone));
    expect(reopened).toEqual({ conversationId: id, conversationCreated: false, stored: true });
    expect(await conversationRow(id)).toMatchObject({ status: "open", closedAt: null, messageCount: 2 });

    await (await getDb()).conversation.update({ where: { id }, data: { status: "handoff" } });
    await ingestInboundMessage(db, inbound(phone));
    expect(await conversationRow(id)).toMatchObject({ status: "handoff", messageCount: 3 });
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(["conversation.created", "conversation.closed"]);
  });

  it("a_pair_whose_conversation_was_removed_after_a_message_gets_a_new_conversation_and_its_created_event", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    const first = await ingestInboundMessage(db, inbound(phone));
    await (await getDb()).conversation.delete({ where: { id: first.conversationId! } });
    const again = await ingestInboundMessage(db, inbound(phone));
    expect(again).toMatchObject({ conversationCreated: true, stored: true });
    expect(again.conversationId).not.toBe(first.conversationId);
    expect(await conversationRow(again.conversationId!)).toMatchObject({ customerIdentifier: phone, messageCount: 1 });
    expect((await eventsOf(tenantId, "conversation.created")).map((e) => e.data.object.id)).toEqual([first.conversationId, again.conversationId]);
  });

  it("a_retried_delivery_of_an_erased_customer_s_message_stores_nothing_and_creates_no_conversation_or_event", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const message = inbound(uniquePhone());
    const first = await ingestInboundMessage(db, message);
    await eraseCustomer(db, { customer_identifier: message.from }, OPERATOR);
    // The pair has no conversation now (the erased one has another identifier), but the message is stored.
    const retried = await ingestInboundMessage(db, message);
    expect(retried).toEqual({ conversationId: null, conversationCreated: false, stored: false });
    const conversations = await (await getDb()).conversation.findMany({ where: { tenantId } });
    expect(conversations.map((c) => [c.id, c.customerIdentifier, c.messageCount])).toEqual([[first.conversationId, `erased:${first.conversationId}`, 1]]);
    expect((await messageRows(tenantId)).map((m) => [m.conversationId, m.body])).toEqual([[first.conversationId, ERASED]]);
    expect((await eventsOf(tenantId, "conversation.created")).map((e) => e.data.object.id)).toEqual([first.conversationId]);
    // A new message from the customer starts a new conversation, as after any erasure.
    const next = await ingestInboundMessage(db, inbound(message.from));
    expect(next).toMatchObject({ conversationCreated: true, stored: true });
    expect(next.conversationId).not.toBe(first.conversationId);
  });

  it("the_analytics_daily_count_of_inbound_messages_counts_each_stored_message_once", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const message = inbound(uniquePhone());
    await Promise.all(Array.from({ length: 3 }, () => ingestInboundMessage(db, message)));
    await ingestInboundMessage(db, inbound(message.from));
    // A day's count is the sum of its shards (one per database connection that counted).
    const counts = await (await getDb()).analyticsDailyCount.groupBy({ by: ["metric"], where: { tenantId }, _sum: { count: true } });
    expect(counts.map((c) => [c.metric, c._sum.count]).sort()).toEqual([
      ["conversations.sms", 1],
      ["messages.inbound", 2],
    ]);
  });

  // Any other sender is stored, as a number or as sent (tests/channels/receivers/verified_senders_are_stored_whatever_their_format.test.ts).
  it("400_a_blank_sender_names_from_and_nothing_is_stored", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const error = await ingestInboundMessage(db, inbound(" ")).catch((e) => e);
    expect(error).toMatchObject({ errorCode: "bad_request", field: "from", message: "invalid field 'from': must be 1 to 320 characters" });
    expect(await messageRows(tenantId)).toEqual([]);
    expect(await eventsOf(tenantId)).toEqual([]);
  });
});
