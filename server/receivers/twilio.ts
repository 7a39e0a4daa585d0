// Twilio receivers, form-encoded: Messaging (SMS, and WhatsApp through Twilio) at
// POST /api/webhooks/twilio/messaging (inbound messages are ingested; status callbacks of messages
// sent through Twilio move them to delivered / failed), and Voice status callbacks at
// POST /api/webhooks/twilio/voice (calls that never reached the assistant). Checked in this order,
// nothing stored before the signature verifies:
//   form body (400) -> X-Twilio-Signature present (401) -> the business number has an active twilio
//   connection (404) -> the signature, with that connection's auth token, over the public URL and the
//   form parameters as received (403: `validateRequest` of the official library refuses it too) -> the
//   payload (400).
// Answered with the empty TwiML Twilio expects (`<Response/>`), also for a retried delivery.
import { hash, timingSafeEqual } from "node:crypto";
import { validateRequest } from "twilio/lib/webhooks/webhooks";
import { z } from "zod";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { assertBoundedInput } from "../lib/bounded-input";
import { AppError } from "../lib/errors";
import { toE164 } from "../lib/customer-identifier";
import { MAX_SENDER_LENGTH } from "../lib/sender-identifier";
import { connectionCredentials, type ResolvedConnection } from "../channels/channel-connections";
import { withVerifiedConnection, type ConnectionGate } from "./connection-gate";
import { ingestInboundMessage } from "../conversations/ingest";
import { applyDeliveryReport, type DeliveryReport } from "../conversations/delivery-reports";
import { applyCallReport } from "../calls/calls.service";
import {
  answerReceiver,
  badSignature,
  malformed,
  missingSignature,
  readRawBody,
  signedUrl,
  textAnswer,
  type ReceiverAnswer,
  type ReceiverRequest,
} from "./receiver-http";
import { instantOfText } from "./provider-values";

const SIGNATURE_HEADER = "X-Twilio-Signature";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
export const MAX_INBOUND_BODY = 16_384;

type Params = Record<string, string | string[]>;

/** The form parameters exactly as sent (a repeated key keeps every value, as the signature does). */
function parseForm(req: ReceiverRequest, raw: string): Params {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) throw malformed("content-type must be application/x-www-form-urlencoded");
  const params: Params = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const seen = params[key];
    params[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

const one = (params: Params, name: string): string | undefined => {
  const value = params[name];
  if (Array.isArray(value)) throw malformed(`invalid field '${name}': sent more than once`, name);
  return value;
};

/** `whatsapp:+9715…` or `+9715…`: the channel and the number. */
function addressOf(params: Params, name: "To" | "From"): { channel: "sms" | "whatsapp"; number: string } {
  const raw = one(params, name);
  if (!raw) throw malformed(`missing required field '${name}'`, name);
  const whatsapp = raw.startsWith("whatsapp:");
  const number = toE164(whatsapp ? raw.slice("whatsapp:".length) : raw);
  if (!number) throw malformed(`invalid field '${name}': not a phone number in E.164`, name);
  return { channel: whatsapp ? "whatsapp" : "sms", number };
}

/**
 * The customer's side (`From` of a message, the caller or callee of a call) as Twilio sent it, without
 * a `whatsapp:` prefix: never refused for its format (a short code, an alphanumeric sender id; ingest
 * and the calls service store it, server/lib/sender-identifier.ts), only when missing or too long.
 */
function senderOf(params: Params, name: "To" | "From"): string {
  const raw = one(params, name)?.trim() ?? "";
  const sender = raw.startsWith("whatsapp:") ? raw.slice("whatsapp:".length).trim() : raw;
  if (!sender) throw malformed(`missing required field '${name}'`, name);
  if (sender.length > MAX_SENDER_LENGTH) throw malformed(`invalid field '${name}': must be at most ${MAX_SENDER_LENGTH} characters`, name);
  return sender;
}

const sid = z.string().regex(/^[A-Z]{2}[0-9a-fA-F]{32}$/, { message: "must be a Twilio SID (2 letters and 32 hex characters)" });

const inboundPayload = z.object({
  MessageSid: sid,
  Body: z
    .string()
    .max(MAX_INBOUND_BODY, { message: `must be at most ${MAX_INBOUND_BODY} characters` })
    .default(""),
  ProfileName: z.string().max(200).optional(),
});

const statusPayload = z.object({
  MessageSid: sid,
  MessageStatus: z.string().max(40),
  ErrorCode: z.string().max(20).optional(),
  ErrorMessage: z.string().max(1000).optional(),
});

/** Twilio's message statuses as ours; statuses on the way (queued, sending, accepted…) change nothing. */
const REPORTED: Record<string, DeliveryReport["status"]> = {
  sent: "sent",
  delivered: "delivered",
  read: "delivered",
  failed: "failed",
  undelivered: "failed",
};

/** The payload's fields, each sent once, checked; a 400 names the first wrong or missing one. */
function parsePayload<S extends z.ZodRawShape>(schema: z.ZodObject<S>, params: Params): z.infer<z.ZodObject<S>> {
  const picked: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) picked[key] = one(params, key);
  const parsed = schema.safeParse(picked);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue.path[0]);
  throw malformed(picked[field] === undefined ? `missing required field '${field}'` : `invalid field '${field}': ${issue.message}`, field);
}

const isStatusCallback = (params: Params) => {
  const status = params.MessageStatus;
  return status !== undefined && status !== "received" && status !== "receiving";
};

const HMAC_BLOCK = 64; // SHA-1's block size (RFC 2104)

/**
 * HMAC-SHA1 (RFC 2104) of `data` with `key`, base64: what `createHmac("sha1", key)` gives, over
 * Node's one-shot `hash()`. Setting up createHmac's context per request (an OpenSSL HMAC context and
 * its digest looked up anew) cost more than the hashing itself: a tenth of a received message's
 * JavaScript CPU under load (profile, issue #33); `hash()` reuses its digest and makes no context object.
 */
export function hmacSha1Base64(key: string, data: string): string {
  let secret = Buffer.from(key, "utf8");
  if (secret.length > HMAC_BLOCK) secret = hash("sha1", secret, "buffer");
  const message = Buffer.from(data, "utf8");
  const inner = Buffer.allocUnsafe(HMAC_BLOCK + message.length);
  const outer = Buffer.allocUnsafe(HMAC_BLOCK + 20);
  for (let i = 0; i < HMAC_BLOCK; i++) {
    const byte = i < secret.length ? secret[i]! : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  message.copy(inner, HMAC_BLOCK);
  hash("sha1", inner, "buffer").copy(outer, HMAC_BLOCK);
  return hash("sha1", outer, "base64");
}

/**
 * Whether `signature` is Twilio's for `url` exactly as given (one of the two forms `validateRequest`
 * tries first: the URL as received without its port and with it) and `params`, each sent once: the signed text is the URL followed by
 * each parameter's name and value, names sorted (the library's `getExpectedTwilioSignature`).
 * False is no refusal: `validateRequest` then decides, over every URL form it accepts.
 */
function signatureMatchesAsSent(authToken: string, signature: string, url: string, params: Params): boolean {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (typeof value !== "string") return false; // a repeated parameter: the library's rules
    data += name + value;
  }
  const expected = Buffer.from(hmacSha1Base64(authToken, data));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * A Twilio request: the form, the signature header (401 when missing), the business number, and
 * the gate that finds its connection (404 when none) and verifies the request with its auth token
 * over the public URL (403; what `validateRequest` of the official library accepts), and its AccountSid.
 * `businessField` names the parameter holding the business number (it depends on the request's
 * kind, read from the form).
 */
async function twilioRequest(req: ReceiverRequest, businessField: (params: Params) => "To" | "From") {
  const params = parseForm(req, await readRawBody(req));
  const signature = req.headers.get(SIGNATURE_HEADER);
  if (!signature) throw missingSignature(SIGNATURE_HEADER);
  const business = addressOf(params, businessField(params));
  const url = signedUrl(req);
  const gate: ConnectionGate = {
    provider: "twilio",
    address: business.number,
    what: `twilio number ${business.number}`,
    verify: (connection) => {
      const credentials = connectionCredentials<"twilio">(connection);
      // The common case (the public URL as is, each parameter once) first; anything else is the official library's call.
      const verified =
        signatureMatchesAsSent(credentials.auth_token, signature, url, params) || validateRequest(credentials.auth_token, signature, url, params);
      if (!verified) throw badSignature(SIGNATURE_HEADER);
      if (one(params, "AccountSid") !== credentials.account_sid) throw new AppError("forbidden", "AccountSid is not the connection's account");
    },
  };
  return { params, business, gate };
}

const tenantDb = async (connection: ResolvedConnection) => scopeToTenant(await getDb(), connection.tenantId);

const emptyTwiml = () => textAnswer(200, "text/xml", EMPTY_TWIML);

export function handleTwilioMessaging(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("twilio", req, async () => {
    // Inbound: the business number is `To`; a status callback reports a message we sent, from `From`.
    const { params, business, gate } = await twilioRequest(req, (p) => (isStatusCallback(p) ? "From" : "To"));
    if (isStatusCallback(params)) {
      await withVerifiedConnection(gate, async (connection) => {
        assertBoundedInput(params);
        const report = parsePayload(statusPayload, params);
        const moved = REPORTED[report.MessageStatus];
        if (!moved) return;
        const error = report.ErrorCode ? `twilio error ${report.ErrorCode}${report.ErrorMessage ? `: ${report.ErrorMessage}` : ""}` : null;
        const delivery = { provider: "twilio" as const, providerMessageId: report.MessageSid, status: moved, error };
        await applyDeliveryReport(await tenantDb(connection), delivery, connection);
      });
    } else {
      // The message's statement checks the connection: a cached one serves (one round trip).
      await withVerifiedConnection(gate, async (connection) => {
        assertBoundedInput(params);
        const message = parsePayload(inboundPayload, params);
        const inbound = {
          provider: "twilio" as const,
          providerMessageId: message.MessageSid,
          channel: business.channel,
          from: senderOf(params, "From"),
          customerName: message.ProfileName ?? null,
          body: message.Body,
        };
        await ingestInboundMessage(connection, inbound, connection);
      });
    }
    return emptyTwiml();
  });
}

const voicePayload = z.object({
  CallSid: sid,
  CallStatus: z.string().max(40),
  Direction: z.string().max(40).default("inbound"),
  Timestamp: z.string().max(100).optional(),
});

/** Twilio's end states of a call nobody answered: the call is `missed` with this reason. */
const UNANSWERED = new Set(["busy", "no-answer", "failed", "canceled"]);

const isOutbound = (params: Params) => String(params.Direction ?? "").startsWith("outbound");

/**
 * Twilio Voice status callbacks (POST /api/webhooks/twilio/voice), for calls that never reached the
 * assistant: busy, no-answer, failed, or canceled (the caller hung up while it rang) record a missed
 * call with `call.started` and `call.missed`. A call that was answered is reported by the voice
 * assistant's own provider (Retell), so Twilio's other statuses are acknowledged and change nothing
 * (recording it twice would count one phone call as two).
 */
export function handleTwilioVoiceStatus(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("twilio", req, async () => {
    const { params, gate } = await twilioRequest(req, (p) => (isOutbound(p) ? "From" : "To"));
    await withVerifiedConnection(gate, async (connection) => {
      assertBoundedInput(params);
      const call = parsePayload(voicePayload, params);
      if (!UNANSWERED.has(call.CallStatus)) return;
      const customer = senderOf(params, isOutbound(params) ? "To" : "From");
      // Twilio writes RFC 2822; a Timestamp that is no date at all counts as now, one outside 0001..9999 is refused.
      const at = (call.Timestamp ? instantOfText(call.Timestamp, "Timestamp") : null) ?? new Date();
      const report = {
        provider: "twilio" as const,
        providerCallId: call.CallSid,
        direction: isOutbound(params) ? ("outbound" as const) : ("inbound" as const),
        customerNumber: customer,
        startedAt: at,
        ended: { at, answered: false, reason: call.CallStatus },
      };
      // The call's transaction checks the connection: a cached one serves.
      await applyCallReport(await tenantDb(connection), report, connection);
    });
    return emptyTwiml();
  });
}
