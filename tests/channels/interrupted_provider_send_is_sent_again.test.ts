// A send through a connected provider that was interrupted (the process died between accepting the
// message and the provider's answer) is left `queued` with a claim that runs out; the recovery
// sweep sends it through the same provider, stores the provider's message id and ends it like any
// send. The provider is a local fake of the Twilio Messages API (credentials and fields checked).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb, uniquePhone } from "../helpers/conversations";
import { connectChannel } from "../../server/channels/channel-connections";
import { OPERATOR } from "../../server/audit/record-audit";
import { resendInterruptedMessages } from "../../server/conversations/send-recovery";
import { uniqueBusinessNumber } from "./fixtures";
import { startFakeTwilio } from "./fake-providers";

const SID = `AC${"7".repeat(8)}${process.pid.toString(16).padStart(24, "0")}`;
const TOKEN = "twilio-auth-token-for-recovery";

describe("interrupted sends through a provider", () => {
  const numbers = [uniqueBusinessNumber(), uniqueBusinessNumber()];
  const refused = uniquePhone();
  let twilio: Awaited<ReturnType<typeof startFakeTwilio>>;

  beforeAll(async () => {
    twilio = await startFakeTwilio({ accounts: [{ sid: SID, token: TOKEN, numbers }], invalidTo: new Set([refused]) });
    process.env.TWILIO_API_BASE_URL = twilio.url;
  });
  afterAll(async () => {
    delete process.env.TWILIO_API_BASE_URL;
    await twilio.close();
  });

  /** A tenant with a Twilio SMS number of its own, and a message a sender that died mid-send left `queued`. */
  async function interruptedSend(number: string, customer: string) {
    const { tenantId } = await tenantWithKey();
    const db = await tenantDb(tenantId);
    await connectChannel(db, { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: SID, auth_token: TOKEN } }, OPERATOR);
    const conversation = await makeConversation(tenantId, "sms", customer);
    const message = await db.message.create({
      data: {
        conversationId: conversation.id,
        direction: "outbound",
        author: "operator",
        body: "Your viewing is at 10",
        status: "queued",
        createdAt: new Date(Date.now() - 180_000),
        sendClaimedUntil: new Date(Date.now() - 60_000),
      } as never,
    });
    return { tenantId, db, message };
  }

  it("a_queued_message_past_its_claim_is_sent_through_the_connected_provider_once_and_keeps_its_sid", async () => {
    const customer = uniquePhone();
    const { tenantId, db, message } = await interruptedSend(numbers[0]!, customer);
    await Promise.all([resendInterruptedMessages(), resendInterruptedMessages()]);

    const requests = twilio.forTo(customer);
    expect(requests).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(requests[0]!.body))).toMatchObject({ To: customer, From: numbers[0], Body: "Your viewing is at 10" });
    const sid = twilio.sids.at(-1)!;
    const row = await db.message.findFirst({ where: { id: message.id } });
    expect([row!.status, row!.sendClaimedUntil, row!.provider, row!.providerMessageId]).toEqual(["sent", null, "twilio", sid]);
    const events = await eventsOf(tenantId, "outbound.sent");
    expect(events.map((e) => [e.data.object.id, e.data.driver, e.data.provider_message_id])).toEqual([[message.id, "twilio", sid]]);

    await resendInterruptedMessages();
    expect(twilio.forTo(customer)).toHaveLength(1);
  });

  it("an_interrupted_message_the_provider_refuses_ends_failed_with_one_outbound_failed", async () => {
    const { tenantId, db, message } = await interruptedSend(numbers[1]!, refused);
    await resendInterruptedMessages();
    const row = await db.message.findFirst({ where: { id: message.id } });
    expect([row!.status, row!.sendClaimedUntil, row!.providerMessageId]).toEqual(["failed", null, null]);
    const events = await eventsOf(tenantId, "outbound.failed");
    expect(events.map((e) => [e.data.object.id, e.data.error])).toEqual([[message.id, `twilio responded 400: 21211 Invalid 'To' Phone Number: ${refused}`]]);
    expect(await eventsOf(tenantId, "outbound.sent")).toEqual([]);
  });
});
