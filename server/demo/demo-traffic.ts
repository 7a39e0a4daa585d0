// The demo tenant's channels and the traffic its week is made of, fed through the receivers: the
// demo connects a Twilio number (SMS, WhatsApp through Twilio, and its voice status callbacks), a
// Retell voice number and a WhatsApp Cloud number, each with credentials generated here, then hands
// each provider's signed payload to the same handler `/api/webhooks` mounts (in-process: a Fetch
// Request in, its Response out, no network). So the demo's calls, transcripts and chats are stored
// by the real verification and ingest path, events included.
import { createHmac, randomBytes } from "node:crypto";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { sign as signRetell } from "retell-sdk/lib/webhook_auth";
import type { TenantDb } from "../db/tenant-scope";
import { Prisma } from "../db/generated/client";
import { modelColumnsSql, TABLE_SQL } from "../db/sql-columns";
import { lockTenantRow } from "../db/lock-row";
import { OPERATOR } from "../audit/record-audit";
import { connectChannel } from "../channels/channel-connections";
import { insertMessagesOnce } from "../conversations/ingest";
import { answerWebhookRequest } from "../receivers";
import { publicBaseUrl } from "../channels/receiver-settings";
import { countNewMessages } from "../conversations/conversations.service";

/** Fictional numbers of the demo business (Dubai landlines) and its WhatsApp Cloud phone_number_id. */
const DEMO_ADDRESSES = { twilio: "+97145550100", voice: "+97145550101", whatsappCloud: "100000000000001" } as const;

export type DemoAddresses = { twilio: string; voice: string; whatsappCloud: string };

export type DemoChannels = {
  tenantId: string;
  addresses: DemoAddresses;
  twilio: { accountSid: string; authToken: string };
  retellApiKey: string;
  whatsappAppSecret: string;
};

const secret = () => randomBytes(24).toString("hex");

/** Connects the demo's three providers (the voice number twice: Retell answers it, Twilio reports the calls it never answered). */
export async function connectDemoChannels(db: TenantDb, addresses: DemoAddresses = DEMO_ADDRESSES): Promise<DemoChannels> {
  const { tenantId } = db;
  const channels: DemoChannels = {
    tenantId,
    addresses,
    twilio: { accountSid: `AC${randomBytes(16).toString("hex")}`, authToken: secret() },
    retellApiKey: secret(),
    whatsappAppSecret: secret(),
  };
  const twilio = { account_sid: channels.twilio.accountSid, auth_token: channels.twilio.authToken };
  await connectChannel(db, { provider: "twilio", channel: "sms", address: addresses.twilio, credentials: twilio }, OPERATOR);
  await connectChannel(db, { provider: "twilio", channel: "voice", address: addresses.voice, credentials: twilio }, OPERATOR);
  await connectChannel(db, { provider: "retell", channel: "voice", address: addresses.voice, credentials: { api_key: channels.retellApiKey } }, OPERATOR);
  await connectChannel(
    db,
    {
      provider: "whatsapp_cloud",
      channel: "whatsapp",
      address: addresses.whatsappCloud,
      credentials: { app_secret: channels.whatsappAppSecret, verify_token: secret(), access_token: secret() },
    },
    OPERATOR,
  );
  return channels;
}

/** The URL a provider calls (and signs): the public base when configured, as the receivers check it. */
const receiverUrl = (path: string) => `${publicBaseUrl() ?? "http://localhost"}${path}`;

/** Hands a request to the receivers; anything but 200 is a bug in the demo's traffic. */
async function deliver(req: Request): Promise<void> {
  const res = await answerWebhookRequest(req);
  if (res.status !== 200) throw new Error(`demo traffic: ${req.method} ${new URL(req.url).pathname} answered ${res.status}: ${await res.text()}`);
}

let sequence = 0;
/** A provider-style id, unique within this seed: 32 hex characters. */
const demoHex = () => `${Date.now().toString(16)}${(++sequence).toString(16)}${randomBytes(16).toString("hex")}`.slice(0, 32);

async function postTwilio(channels: DemoChannels, path: string, params: Record<string, string>): Promise<void> {
  const url = receiverUrl(path);
  await deliver(
    new Request(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(channels.twilio.authToken, url, params),
      },
      body: new URLSearchParams(params).toString(),
    }),
  );
}

/** An inbound SMS (or WhatsApp through Twilio) from `customer`; returns its MessageSid. */
async function twilioInbound(channels: DemoChannels, customer: string, body: string, opts: { whatsapp?: boolean; profileName?: string } = {}) {
  const sid = `SM${demoHex()}`;
  const prefix = opts.whatsapp ? "whatsapp:" : "";
  await postTwilio(channels, "/api/webhooks/twilio/messaging", {
    MessageSid: sid,
    SmsSid: sid,
    AccountSid: channels.twilio.accountSid,
    From: `${prefix}${customer}`,
    To: `${prefix}${channels.addresses.twilio}`,
    Body: body,
    NumMedia: "0",
    SmsStatus: "received",
    ...(opts.profileName ? { ProfileName: opts.profileName } : {}),
  });
  return sid;
}

/** Twilio's status callback for a message the demo sent through it. */
async function twilioDelivered(channels: DemoChannels, customer: string, sid: string, opts: { whatsapp?: boolean } = {}) {
  const prefix = opts.whatsapp ? "whatsapp:" : "";
  await postTwilio(channels, "/api/webhooks/twilio/messaging", {
    MessageSid: sid,
    AccountSid: channels.twilio.accountSid,
    From: `${prefix}${channels.addresses.twilio}`,
    To: `${prefix}${customer}`,
    MessageStatus: "delivered",
  });
}

/** Twilio Voice's final status callback of a call nobody answered (no-answer, busy, canceled). */
export async function twilioUnansweredCall(channels: DemoChannels, customer: string, status: "no-answer" | "busy" | "canceled", at: Date) {
  await postTwilio(channels, "/api/webhooks/twilio/voice", {
    CallSid: `CA${demoHex()}`,
    AccountSid: channels.twilio.accountSid,
    From: customer,
    To: channels.addresses.voice,
    CallStatus: status,
    Direction: "inbound",
    Timestamp: at.toUTCString(),
  });
}

type Turn = ["customer" | "assistant", string];

/**
 * An inbound call the Retell assistant took, as Retell reports it: `call_started`, then
 * `call_ended` with the transcript (a caller who hangs up before the assistant speaks abandoned the
 * call: missed), then `call_analyzed` with the summary.
 */
export async function retellCall(channels: DemoChannels, customer: string, startedAt: Date, turns: Turn[], summary: string | null) {
  const call = {
    call_type: "phone_call",
    call_id: `call_${demoHex()}`,
    agent_id: "agent_demo_receptionist",
    direction: "inbound",
    from_number: customer,
    to_number: channels.addresses.voice,
    start_timestamp: startedAt.getTime(),
  };
  // About 9 seconds a turn, the first after the greeting's pause.
  const transcript = turns.map(([role, content], i) => ({
    role: role === "assistant" ? "agent" : "user",
    content,
    words: [{ word: content.split(" ")[0], start: 1 + i * 9 }],
  }));
  const durationMs = (turns.length * 9 + 4) * 1000;
  const ended = {
    ...call,
    call_status: "ended",
    end_timestamp: startedAt.getTime() + durationMs,
    duration_ms: durationMs,
    transcript_object: transcript,
    disconnection_reason: "user_hangup",
    recording_url: `https://recordings.demo.example/${call.call_id}.wav`,
  };
  await postRetell(channels, { event: "call_started", call: { ...call, call_status: "ongoing" } });
  await postRetell(channels, { event: "call_ended", call: ended });
  if (summary) await postRetell(channels, { event: "call_analyzed", call: { ...ended, call_analysis: { call_summary: summary } } });
}

async function postRetell(channels: DemoChannels, payload: unknown) {
  const raw = JSON.stringify(payload);
  await deliver(
    new Request(receiverUrl("/api/webhooks/retell"), {
      method: "POST",
      headers: { "content-type": "application/json", "x-retell-signature": await signRetell(raw, channels.retellApiKey) },
      body: raw,
    }),
  );
}

async function postWhatsApp(channels: DemoChannels, value: Record<string, unknown>) {
  const raw = JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "demo-waba",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: channels.addresses.twilio.slice(1), phone_number_id: channels.addresses.whatsappCloud },
              ...value,
            },
          },
        ],
      },
    ],
  });
  const signature = `sha256=${createHmac("sha256", channels.whatsappAppSecret).update(raw, "utf8").digest("hex")}`;
  await deliver(
    new Request(receiverUrl(`/api/webhooks/whatsapp/${channels.addresses.whatsappCloud}`), {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": signature },
      body: raw,
    }),
  );
}

/** A WhatsApp Cloud text message from `customer` (E.164), with their profile name; returns its wamid. */
async function whatsappInbound(channels: DemoChannels, customer: string, name: string, body: string) {
  const id = `wamid.${demoHex()}`;
  const waId = customer.slice(1);
  await postWhatsApp(channels, {
    contacts: [{ wa_id: waId, profile: { name } }],
    messages: [{ from: waId, id, timestamp: String(Math.floor(Date.now() / 1000)), type: "text", text: { body } }],
  });
  return id;
}

/** WhatsApp Cloud's `read` status of a message the demo sent through it. */
async function whatsappRead(channels: DemoChannels, customer: string, id: string) {
  await postWhatsApp(channels, { statuses: [{ id, status: "read", timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: customer.slice(1) }] });
}

/**
 * The assistant's reply as a send through the provider records it (outbound, `sent`, with the
 * provider's message id, counted on its conversation); its delivery report then comes through the
 * receiver. Stored here rather than sent: the demo has no provider account to send through.
 */
async function recordProviderReply(
  db: TenantDb,
  tenantId: string,
  conversationId: string,
  provider: "twilio" | "whatsapp_cloud",
  author: "assistant" | "operator",
  body: string,
  at: Date,
) {
  const providerMessageId = provider === "twilio" ? `SM${demoHex()}` : `wamid.${demoHex()}`;
  await db.$transaction(async (tx) => {
    await lockTenantRow(tx, "Conversation", conversationId);
    await insertMessagesOnce(tx, [
      {
        tenantId,
        conversationId,
        direction: "outbound",
        author,
        body,
        status: "sent",
        provider,
        providerMessageId,
        createdAt: at,
      },
    ]);
    await countNewMessages(tx, conversationId, at);
  });
  return providerMessageId;
}

export type ChatLine = ["customer" | "assistant" | "operator", string];
export type Chat = {
  channel: "sms" | "whatsapp";
  /** Which provider carries it: Twilio (SMS, or WhatsApp through Twilio) or the WhatsApp Cloud API. */
  via: "twilio" | "whatsapp_cloud";
  customer: string;
  name: string;
  lines: ChatLine[];
  /** When each line was written (the receivers stamp arrival; the demo's week is then dated back). */
  times: Date[];
};

/**
 * A chat as its traffic: each customer line an inbound message through its provider's receiver
 * (the first creates the conversation, `conversation.created`), each reply recorded as sent through
 * the provider and reported delivered (or read) through the receiver. Returns the conversation id.
 */
export async function driveChat(db: TenantDb, channels: DemoChannels, chat: Chat): Promise<string> {
  const whatsapp = chat.channel === "whatsapp";
  const inbound: { id: string; at: Date }[] = [];
  let conversationId: string | undefined;
  for (const [i, [author, body]] of chat.lines.entries()) {
    if (author === "customer") {
      const id =
        chat.via === "whatsapp_cloud"
          ? await whatsappInbound(channels, chat.customer, chat.name, body)
          : await twilioInbound(channels, chat.customer, body, { whatsapp, profileName: whatsapp ? chat.name : undefined });
      inbound.push({ id, at: chat.times[i] });
      conversationId ??= (await db.conversation.findFirst({ where: { channel: chat.channel, customerIdentifier: chat.customer }, select: { id: true } }))?.id;
      continue;
    }
    if (!conversationId) throw new Error("demo traffic: a chat starts with the customer");
    const id = await recordProviderReply(db, channels.tenantId, conversationId, chat.via, author, body, chat.times[i]);
    if (chat.via === "whatsapp_cloud") await whatsappRead(channels, chat.customer, id);
    else await twilioDelivered(channels, chat.customer, id, { whatsapp });
  }
  // Each inbound message dated when it was written (the counters follow the moved rows).
  for (const { id, at } of inbound) await db.message.updateMany({ where: { provider: chat.via, providerMessageId: id }, data: { createdAt: at } });
  return conversationId!;
}

// The dating statement's column names come from the model (server/db/sql-columns.ts).
const CONVERSATION = modelColumnsSql(Prisma.ConversationScalarFieldEnum);
const MESSAGE = modelColumnsSql(Prisma.MessageScalarFieldEnum);
const CALL = modelColumnsSql(Prisma.CallScalarFieldEnum);

/**
 * After the week's traffic: each conversation dates from its first message or call (a minute
 * before), and its last message and activity are its latest message's (or call's) time.
 */
export async function dateConversationsByTheirTraffic(db: TenantDb): Promise<void> {
  const { tenantId } = db;
  await db.$executeRaw`
    UPDATE ${TABLE_SQL.Conversation} c SET
      ${CONVERSATION.createdAt} = LEAST(c.${CONVERSATION.createdAt}, t.first - interval '1 minute'),
      ${CONVERSATION.lastMessageAt} = t.last_message, ${CONVERSATION.lastActivityAt} = GREATEST(t.last_message, t.last_call)
    FROM (
      SELECT conv.${CONVERSATION.id},
        (SELECT max(${MESSAGE.createdAt}) FROM ${TABLE_SQL.Message} m WHERE m.${MESSAGE.tenantId} = ${tenantId}::uuid AND m.${MESSAGE.conversationId} = conv.${CONVERSATION.id}) AS last_message,
        (SELECT max(${CALL.startedAt}) FROM ${TABLE_SQL.Call} k WHERE k.${CALL.tenantId} = ${tenantId}::uuid AND k.${CALL.conversationId} = conv.${CONVERSATION.id}) AS last_call,
        LEAST(
          (SELECT min(${MESSAGE.createdAt}) FROM ${TABLE_SQL.Message} m WHERE m.${MESSAGE.tenantId} = ${tenantId}::uuid AND m.${MESSAGE.conversationId} = conv.${CONVERSATION.id}),
          (SELECT min(${CALL.startedAt}) FROM ${TABLE_SQL.Call} k WHERE k.${CALL.tenantId} = ${tenantId}::uuid AND k.${CALL.conversationId} = conv.${CONVERSATION.id})) AS first
      FROM ${TABLE_SQL.Conversation} conv WHERE conv.${CONVERSATION.tenantId} = ${tenantId}::uuid
    ) t
    WHERE c.${CONVERSATION.tenantId} = ${tenantId}::uuid AND c.${CONVERSATION.id} = t.${CONVERSATION.id} AND t.first IS NOT NULL`;
}
