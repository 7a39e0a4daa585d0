// A send interrupted between the driver call and the final write (the process died) leaves the
// message `queued` with a claim that runs out; the recovery sweep sends it again with the same
// message id and records the outcome. CHANNEL_DRIVER=http against a fake provider on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, startFakeServer, tenantDb } from "../helpers/conversations";
import { MAX_RESEND_AGE_MS, resendInterruptedMessages } from "../../server/conversations/send-recovery";

type Fake = Awaited<ReturnType<typeof startFakeServer>>;

describe("interrupted outbound sends", () => {
  let fake: Fake;

  beforeAll(async () => {
    fake = await startFakeServer((_req, res) => {
      res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ id: "prov-again" }));
    });
    process.env.CHANNEL_DRIVER = "http";
    process.env.CHANNEL_HTTP_BASE_URL = fake.url;
  });
  afterAll(async () => {
    delete process.env.CHANNEL_DRIVER;
    delete process.env.CHANNEL_HTTP_BASE_URL;
    await fake.close();
  });

  /** A message as a sender that died mid-send leaves it: `queued`, claimed until `claimedUntil`. */
  async function interruptedMessage(opts: { createdAgoMs: number; claimedUntil: Date }) {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "sms");
    const db = await tenantDb(tenantId);
    const message = await db.message.create({
      data: {
        conversationId: conversation.id,
        direction: "outbound",
        author: "operator",
        body: "Your viewing is at 10",
        status: "queued",
        createdAt: new Date(Date.now() - opts.createdAgoMs),
        sendClaimedUntil: opts.claimedUntil,
      } as never,
    });
    return { tenantId, key, conversation, message, db };
  }
  const postsFor = (messageId: string) => fake.received.filter((r) => r.headers["idempotency-key"] === messageId);

  it("a_queued_message_past_its_claim_is_sent_again_once_with_its_id_as_idempotency_key", async () => {
    const { tenantId, key, conversation, message, db } = await interruptedMessage({ createdAgoMs: 180_000, claimedUntil: new Date(Date.now() - 60_000) });
    // Two sweeps at once (two processes): the claim lets only one of them take the message.
    await Promise.all([resendInterruptedMessages(), resendInterruptedMessages()]);

    const posts = postsFor(message.id);
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0].body)).toMatchObject({ message_id: message.id, conversation_id: conversation.id, body: "Your viewing is at 10" });
    const row = await db.message.findFirst({ where: { id: message.id } });
    expect([row!.status, row!.sendClaimedUntil]).toEqual(["sent", null]);
    const listed = await call("GET", `/conversations/${conversation.id}/messages`, { key });
    expect(listed.body.data.map((m: any) => [m.id, m.status])).toEqual([[message.id, "sent"]]);
    const [event] = await eventsOf(tenantId, "outbound.sent");
    expect(event.data).toMatchObject({ object: { id: message.id, status: "sent" }, driver: "http", provider_message_id: "prov-again" });

    await resendInterruptedMessages();
    expect(postsFor(message.id)).toHaveLength(1);
  });

  it("a_send_still_inside_its_claim_is_left_to_its_sender", async () => {
    const { message, db } = await interruptedMessage({ createdAgoMs: 5_000, claimedUntil: new Date(Date.now() + 115_000) });
    await resendInterruptedMessages();
    expect(postsFor(message.id)).toHaveLength(0);
    const row = await db.message.findFirst({ where: { id: message.id } });
    expect(row!.status).toBe("queued");
  });

  it("a_message_interrupted_over_an_hour_ago_ends_failed_without_being_sent", async () => {
    const { tenantId, message, db } = await interruptedMessage({
      createdAgoMs: MAX_RESEND_AGE_MS + 60_000,
      claimedUntil: new Date(Date.now() - MAX_RESEND_AGE_MS),
    });
    await resendInterruptedMessages();
    expect(postsFor(message.id)).toHaveLength(0);
    const row = await db.message.findFirst({ where: { id: message.id } });
    expect([row!.status, row!.sendClaimedUntil]).toEqual(["failed", null]);
    const [event] = await eventsOf(tenantId, "outbound.failed");
    expect(event.data).toMatchObject({ object: { id: message.id, status: "failed" }, error: "send interrupted; not sent again after 1 hour" });
  });

  it("a_completed_send_leaves_no_claim_behind", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "sms");
    const sent = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "hello" } });
    expect([sent.status, sent.body.status]).toEqual([201, "sent"]);
    const row = await (await tenantDb(tenantId)).message.findFirst({ where: { id: sent.body.id } });
    expect(row!.sendClaimedUntil).toBeNull();
  });
});
