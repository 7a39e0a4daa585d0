// Twilio Messaging receiver (SMS, and WhatsApp through Twilio): POST /api/webhooks/twilio/messaging,
// form-encoded. Inbound messages are ingested; status callbacks of messages sent through Twilio move
// them to delivered / failed. Checked in this order, nothing stored before the signature verifies:
//   form body (400) -> X-Twilio-Signature present (401) -> the business number has an active twilio
//   connection (404) -> `validateRequest` of the official library, with that connection's auth token,
//   over the public URL and the form parameters as received (403) -> the payload (400).
// Answered with the empty TwiML Twilio expects (`<Response/>`), also for a retried delivery.
import { validateRequest } from "twilio/lib/webhooks/webhooks";
import { z } from "zod";
import { getDb } from "../../db/client";
import { scopeToTenant } from "../../db/tenant-scope";
import { assertBoundedInput } from "../../api/bounded-input";
import { AppError } from "../../errors";
import { toE164 } from "../../conversations/customer-identifier";
import { connectionCredentials, findActiveConnection } from "../channel-connections";
import { ingestInboundMessage } from "../ingest";
import { applyDeliveryReport, type DeliveryReport } from "../delivery-reports";
import {
  answerReceiver, badSignature, malformed, missingSignature, readRawBody, signedUrl, unknownAddress,
} from "./receiver-http";

const SIGNATURE_HEADER = "X-Twilio-Signature";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
export const MAX_INBOUND_BODY = 16_384;

type Params = Record<string, string | string[]>;

/** The form parameters exactly as sent (a repeated key keeps every value, as the signature does). */
function parseForm(req: Request, raw: string): Params {
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

const sid = z.string().regex(/^[A-Z]{2}[0-9a-fA-F]{32}$/, { message: "must be a Twilio SID (2 letters and 32 hex characters)" });

const inboundPayload = z.object({
  MessageSid: sid,
  Body: z.string().max(MAX_INBOUND_BODY, { message: `must be at most ${MAX_INBOUND_BODY} characters` }).default(""),
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
  sent: "sent", delivered: "delivered", read: "delivered", failed: "failed", undelivered: "failed",
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

export function handleTwilioMessaging(req: Request): Promise<Response> {
  return answerReceiver("twilio", req, async () => {
    const params = parseForm(req, await readRawBody(req));
    const signature = req.headers.get(SIGNATURE_HEADER);
    if (!signature) throw missingSignature(SIGNATURE_HEADER);
    const status = isStatusCallback(params);
    // Inbound: the business number is `To`; a status callback reports a message we sent, from `From`.
    const business = addressOf(params, status ? "From" : "To");
    const connection = await findActiveConnection("twilio", business.number);
    if (!connection) throw unknownAddress(`twilio number ${business.number}`);
    const credentials = connectionCredentials<"twilio">(connection);
    if (!validateRequest(credentials.auth_token, signature, signedUrl(req), params)) throw badSignature(SIGNATURE_HEADER);
    if (one(params, "AccountSid") !== credentials.account_sid) throw new AppError("forbidden", "AccountSid is not the connection's account");

    assertBoundedInput(params);
    const db = scopeToTenant(await getDb(), connection.tenantId);
    if (status) {
      const report = parsePayload(statusPayload, params);
      const moved = REPORTED[report.MessageStatus];
      if (moved) {
        const error = report.ErrorCode ? `twilio error ${report.ErrorCode}${report.ErrorMessage ? `: ${report.ErrorMessage}` : ""}` : null;
        await applyDeliveryReport(db, { provider: "twilio", providerMessageId: report.MessageSid, status: moved, error });
      }
    } else {
      const message = parsePayload(inboundPayload, params);
      const from = addressOf(params, "From");
      await ingestInboundMessage(db, connection.tenantId, {
        provider: "twilio", providerMessageId: message.MessageSid, channel: business.channel,
        from: from.number, customerName: message.ProfileName ?? null, body: message.Body,
      });
    }
    return new Response(EMPTY_TWIML, { status: 200, headers: { "content-type": "text/xml" } });
  });
}
