// WhatsApp Cloud API receiver: /api/webhooks/whatsapp/{phone_number_id}, the callback URL a tenant
// sets in its Meta app (the path names the connection, since Meta's verification GET carries no
// number). Meta publishes no server library for its signature: the documented algorithm is used,
// `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the app secret>`.
//   GET  the subscription handshake: hub.mode=subscribe and the connection's verify token echo
//        hub.challenge (unknown connection 404, wrong token 403, anything else 400).
//   POST messages and statuses: signature present (401) -> connection (404) -> signature (403) ->
//        payload (400); every change must be for this number. Text messages are ingested (other
//        types as their caption or `[type]`), statuses move messages sent through WhatsApp.
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { assertBoundedInput } from "../lib/bounded-input";
import { AppError, fromZodError } from "../lib/errors";
import { MAX_SENDER_LENGTH } from "../lib/sender-identifier";
import { connectionCredentials, findActiveConnection, type ResolvedConnection } from "../channels/channel-connections";
import { withVerifiedConnection, type ConnectionGate } from "./connection-gate";
import { ingestInboundMessage } from "../conversations/ingest";
import { applyDeliveryReport, type DeliveryReport } from "../conversations/delivery-reports";
import {
  answerReceiver,
  badSignature,
  jsonAnswer,
  malformed,
  missingSignature,
  readRawBody,
  textAnswer,
  unknownAddress,
  type ReceiverAnswer,
  type ReceiverRequest,
} from "./receiver-http";
import { MAX_INBOUND_BODY } from "./twilio";

const SIGNATURE_HEADER = "X-Hub-Signature-256";
const PREFIX = "/api/webhooks/whatsapp/";

/** The connection's phone_number_id, the path's last segment (a 404 when it cannot be one). */
function phoneNumberIdOf(req: ReceiverRequest): string {
  const phoneNumberId = req.url.pathname.slice(PREFIX.length);
  if (!/^\d{1,32}$/.test(phoneNumberId)) throw unknownAddress(`whatsapp_cloud phone_number_id '${phoneNumberId.slice(0, 40)}'`);
  return phoneNumberId;
}

async function connectionOf(req: ReceiverRequest): Promise<{ phoneNumberId: string; connection: ResolvedConnection }> {
  const phoneNumberId = phoneNumberIdOf(req);
  const connection = await findActiveConnection("whatsapp_cloud", phoneNumberId);
  if (!connection) throw unknownAddress(`whatsapp_cloud phone_number_id ${phoneNumberId}`);
  return { phoneNumberId, connection };
}

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** GET: Meta's subscription handshake. */
export function handleWhatsAppVerification(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("whatsapp_cloud", req, async () => {
    const query = req.url.searchParams;
    const { connection } = await connectionOf(req);
    if (query.get("hub.mode") !== "subscribe") throw malformed("invalid field 'hub.mode': must be subscribe", "hub.mode");
    const challenge = query.get("hub.challenge") ?? "";
    if (!/^[\w-]{1,256}$/.test(challenge)) throw malformed("invalid field 'hub.challenge': must be 1 to 256 letters, digits, '_' or '-'", "hub.challenge");
    if (!sameSecret(query.get("hub.verify_token") ?? "", connectionCredentials<"whatsapp_cloud">(connection).verify_token)) {
      throw new AppError("forbidden", "hub.verify_token does not match");
    }
    return textAnswer(200, "text/plain", challenge);
  });
}

function verifies(raw: string, appSecret: string, header: string): boolean {
  const expected = `sha256=${createHmac("sha256", appSecret).update(raw, "utf8").digest("hex")}`;
  return sameSecret(header.toLowerCase(), expected);
}

const inboundMessage = z.looseObject({
  // The sender's WhatsApp id (wa_id, digits): never refused for its format, only when blank or too long.
  from: z
    .string()
    .trim()
    .min(1, { message: "must not be blank" })
    .max(MAX_SENDER_LENGTH, { message: `must be at most ${MAX_SENDER_LENGTH} characters` }),
  id: z.string().min(1).max(200),
  type: z.string().max(40),
  text: z.object({ body: z.string().max(MAX_INBOUND_BODY) }).optional(),
});

const statusReport = z.object({
  id: z.string().min(1).max(200),
  status: z.string().max(40),
  errors: z
    .array(z.object({ code: z.union([z.number(), z.string()]).optional(), title: z.string().max(1000).optional() }))
    .max(20)
    .optional(),
});

const changeValue = z.object({
  messaging_product: z.literal("whatsapp", { message: "must be whatsapp" }),
  metadata: z.object({ phone_number_id: z.string().max(32) }),
  contacts: z
    .array(z.object({ wa_id: z.string().max(20).optional(), profile: z.object({ name: z.string().max(200).optional() }).optional() }))
    .max(1000)
    .optional(),
  messages: z.array(inboundMessage).max(1000).optional(),
  statuses: z.array(statusReport).max(1000).optional(),
});

const notification = z.object({
  object: z.literal("whatsapp_business_account", { message: "must be whatsapp_business_account" }),
  entry: z.array(z.object({ changes: z.array(z.object({ field: z.string().max(100), value: z.unknown() })).max(1000) })).max(1000),
});

type ChangeValue = z.infer<typeof changeValue>;

/** The text a message stores: its text, or a media message's caption, or `[type]`. */
function bodyOf(message: z.infer<typeof inboundMessage>): string {
  if (message.text) return message.text.body;
  const media = (message as Record<string, unknown>)[message.type] as { caption?: unknown } | undefined;
  const caption = typeof media?.caption === "string" ? media.caption.slice(0, MAX_INBOUND_BODY) : "";
  return caption || `[${message.type}]`;
}

const REPORTED: Record<string, DeliveryReport["status"]> = { sent: "sent", delivered: "delivered", read: "delivered", failed: "failed" };

/** Every `messages` change of the notification, checked; a 400 names the first wrong field. */
function messageChanges(payload: unknown, phoneNumberId: string): ChangeValue[] {
  const parsed = notification.safeParse(payload);
  if (!parsed.success) throw fromZodError(parsed.error);
  const values: ChangeValue[] = [];
  for (const [e, entry] of parsed.data.entry.entries()) {
    for (const [c, change] of entry.changes.entries()) {
      if (change.field !== "messages") continue;
      const value = changeValue.safeParse(change.value);
      if (!value.success) {
        throw fromZodError(new z.ZodError(value.error.issues.map((i) => ({ ...i, path: ["entry", e, "changes", c, "value", ...i.path] }))));
      }
      const at = `entry[${e}].changes[${c}].value`;
      if (value.data.metadata.phone_number_id !== phoneNumberId) {
        const field = `${at}.metadata.phone_number_id`;
        throw malformed(`invalid field '${field}': not the phone_number_id of this callback URL (${phoneNumberId})`, field);
      }
      values.push(value.data);
    }
  }
  return values;
}

/** POST: messages and statuses. */
export function handleWhatsAppNotification(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("whatsapp_cloud", req, async () => {
    const raw = await readRawBody(req);
    const signature = req.headers.get(SIGNATURE_HEADER);
    if (!signature) throw missingSignature(SIGNATURE_HEADER);
    const phoneNumberId = phoneNumberIdOf(req);
    const gate: ConnectionGate = {
      provider: "whatsapp_cloud",
      address: phoneNumberId,
      what: `whatsapp_cloud phone_number_id ${phoneNumberId}`,
      verify: (connection) => {
        if (!verifies(raw, connectionCredentials<"whatsapp_cloud">(connection).app_secret, signature)) throw badSignature(SIGNATURE_HEADER);
      },
    };
    await withVerifiedConnection(gate, async (connection) => {
      let payload: unknown;
      try {
        payload = JSON.parse(raw);
      } catch {
        throw malformed("malformed JSON body");
      }
      assertBoundedInput(payload);
      const changes = messageChanges(payload, phoneNumberId);
      for (const value of changes) {
        const names = new Map((value.contacts ?? []).map((c) => [c.wa_id, c.profile?.name ?? null]));
        for (const message of value.messages ?? []) {
          const inbound = {
            provider: "whatsapp_cloud" as const,
            providerMessageId: message.id,
            channel: "whatsapp" as const,
            from: message.from,
            // A wa_id is the number in international form without its `+`.
            fromNumber: /^\d+$/.test(message.from) ? `+${message.from}` : undefined,
            customerName: names.get(message.from) ?? null,
            body: bodyOf(message),
          };
          await ingestInboundMessage(connection, inbound, connection);
        }
        for (const status of value.statuses ?? []) {
          const moved = REPORTED[status.status];
          if (!moved) continue;
          const error = status.errors?.[0]
            ? `whatsapp error ${status.errors[0].code ?? ""}${status.errors[0].title ? `: ${status.errors[0].title}` : ""}`.trim()
            : null;
          await applyDeliveryReport(
            scopeToTenant(await getDb(), connection.tenantId),
            {
              provider: "whatsapp_cloud",
              providerMessageId: status.id,
              status: moved,
              error,
            },
            connection,
          );
        }
      }
    });
    return jsonAnswer(200, { received: true });
  });
}
