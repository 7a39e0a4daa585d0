// An inbound message from the customer arriving while they are erased is either erased with them
// or kept whole (in a new conversation of their identifier), never half: the erasure takes the
// conversation's row lock that ingest takes before it stores a message. Repeated with the two
// started together; on PGlite (one connection) they serialise, and the same outcomes must hold.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { ingestInboundMessage } from "../../server/conversations/ingest";
import { applyCallReport } from "../../server/calls/calls.service";
import { eraseCustomer } from "../../server/erasure/erasure.service";
import { ERASED } from "../../server/erasure/erasure.types";
import { OPERATOR } from "../../server/audit/record-audit";
import { newTenant } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";

const ROUNDS = 12;

describe("erasure against a concurrent inbound message", () => {
  it("the_racing_message_is_erased_or_kept_whole_and_every_conversation_counts_its_messages", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    const outcomes = { erased: 0, kept: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const phone = uniquePhone();
      const body = `Racing message ${round} from ${phone}`;
      await ingestInboundMessage(db, { provider: "twilio", providerMessageId: `SMfirst${process.pid}x${round}`, channel: "sms", from: phone, body: "first" });
      const racing = { provider: "twilio" as const, providerMessageId: `SMrace${process.pid}x${round}`, channel: "sms" as const, from: phone, body };
      // Alternate which one starts first, so both orders are met.
      const [erasure, ingested] =
        round % 2 === 0
          ? await Promise.all([eraseCustomer(db, { customer_identifier: phone }, OPERATOR), ingestInboundMessage(db, racing)])
          : await Promise.all([ingestInboundMessage(db, racing), eraseCustomer(db, { customer_identifier: phone }, OPERATOR)]).then(
              ([i, e]) => [e, i] as const,
            );
      expect(erasure.status).toBe("erased");

      const stored = await (await openDatabase()).prisma.message.findFirstOrThrow({ where: { tenantId, providerMessageId: racing.providerMessageId } });
      const conversation = await (await openDatabase()).prisma.conversation.findFirstOrThrow({ where: { id: stored.conversationId } });
      if (stored.body === ERASED) {
        outcomes.erased++;
        expect(conversation.customerIdentifier).toBe(`erased:${conversation.id}`);
        expect(erasure.message_ids).toContain(stored.id);
      } else {
        outcomes.kept++;
        expect(stored.body).toBe(body);
        // Kept whole: in a live conversation of the customer, not in the erased one.
        expect(conversation.customerIdentifier).toBe(phone);
        expect(erasure.conversation_ids).not.toContain(conversation.id);
        expect(ingested).toMatchObject({ stored: true, conversationId: stored.conversationId });
      }
    }
    // Every conversation's count matches its rows (nothing was counted into one and stored in another).
    const conversations = await (await openDatabase()).prisma.conversation.findMany({
      where: { tenantId },
      include: { _count: { select: { messages: true } } },
    });
    for (const c of conversations) expect(c.messageCount).toBe(c._count.messages);
    // No erased conversation holds a message that is not erased.
    const leftovers = await (await openDatabase()).prisma.message.count({
      where: { tenantId, body: { not: ERASED }, conversation: { customerIdentifier: { startsWith: "erased:" } } },
    });
    expect(leftovers).toBe(0);
    expect(outcomes.erased + outcomes.kept).toBe(ROUNDS);
  }, 60_000);

  it("a_call_transcript_racing_the_erasure_is_erased_or_kept_whole_in_a_live_conversation", async () => {
    const { id: tenantId } = await newTenant();
    const db = await tenantDb(tenantId);
    for (let round = 0; round < ROUNDS; round++) {
      const phone = uniquePhone();
      await applyCallReport(db, {
        provider: "retell",
        providerCallId: `first_${process.pid}_${round}`,
        direction: "inbound",
        customerNumber: phone,
        startedAt: new Date(),
      });
      const text = `Racing transcript ${round} of ${phone}`;
      const at = new Date();
      const racing = applyCallReport(db, {
        provider: "retell",
        providerCallId: `race_${process.pid}_${round}`,
        direction: "inbound",
        customerNumber: phone,
        startedAt: at,
        ended: { at: new Date(at.getTime() + 5000), answered: true, reason: "user_hangup" },
        transcript: [{ role: "customer", text, at: new Date(at.getTime() + 1000) }],
      });
      const [erasure] = await Promise.all([eraseCustomer(db, { customer_identifier: phone }, OPERATOR), racing]);
      expect(erasure.status).toBe("erased");
      const stored = await (await openDatabase()).prisma.message.findMany({ where: { tenantId, OR: [{ body: text }, { id: { in: erasure.message_ids } }] } });
      const whole = stored.filter((m) => m.body === text);
      for (const m of whole) {
        const conversation = await (await openDatabase()).prisma.conversation.findFirstOrThrow({ where: { id: m.conversationId } });
        expect(conversation.customerIdentifier).toBe(phone);
      }
    }
    const leftovers = await (await openDatabase()).prisma.message.count({
      where: { tenantId, body: { not: ERASED }, conversation: { customerIdentifier: { startsWith: "erased:" } } },
    });
    expect(leftovers).toBe(0);
    const conversations = await (await openDatabase()).prisma.conversation.findMany({
      where: { tenantId },
      include: { _count: { select: { messages: true } } },
    });
    for (const c of conversations) expect(c.messageCount).toBe(c._count.messages);
  }, 60_000);
});
