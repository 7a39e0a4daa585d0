// Vapi receiver (voice): POST /api/webhooks/vapi, Vapi's server messages `{ "message": { type, … } }`.
// `status-update` starts the call (`in-progress`: the assistant is on the line); the
// `end-of-call-report` ends it with its transcript (`artifact.messages`), recording and summary.
// Other messages (transcripts as they happen, conversation updates…) are acknowledged and change
// nothing. Checked in this order, nothing stored before the signature verifies:
//   x-vapi-signature present (401) -> JSON body (400) -> the business number (the Vapi phone number
//   of the call) has an active vapi connection (404) -> the signature (403) -> the payload (400).
// The signature is Vapi's HMAC server credential set up as docs/channels.md says: HMAC-SHA256 of
// the raw body with the connection's secret, hex, in `x-vapi-signature` (no timestamp; an optional
// `sha256=` prefix is accepted). Vapi's server SDK is an API client with no verification helper,
// so the documented algorithm is applied here. Answered 200 `{"received":true}`.
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { toE164 } from "../lib/customer-identifier";
import { applyCallReport, type CallReport, type TranscriptTurn } from "../calls/calls.service";
import { receiveSignedCallWebhook } from "./signed-call-webhook";
import { answerReceiver, jsonAnswer, malformed, type ReceiverAnswer, type ReceiverRequest } from "./receiver-http";
import { MAX_INBOUND_BODY } from "./twilio";
import { instantAfter, instantAt, wholeSeconds } from "./provider-values";

const SIGNATURE_HEADER = "x-vapi-signature";

/** Ended reasons of a call that never reached the customer and the assistant together. */
const NEVER_CONNECTED = new Set([
  "customer-did-not-answer",
  "customer-busy",
  "twilio-failed-to-connect-call",
  "twilio-reported-customer-misdialed",
  "vonage-failed-to-connect-call",
  "vonage-rejected",
  "manually-canceled",
  "voicemail",
  "call.in-progress.error-providerfault-transport-never-connected",
  "call.in-progress.error-vapifault-transport-never-connected",
]);

const isoTime = z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" });
const phone = z.object({ number: z.string().max(40).optional() }).optional();

const spoken = z.object({
  role: z.string().max(40),
  message: z.string().max(MAX_INBOUND_BODY).optional(),
  time: z.number().nonnegative().optional(),
  secondsFromStart: z.number().nonnegative().optional(),
});

const messagePayload = z.object({
  type: z.string().max(100),
  status: z.string().max(40).optional(),
  endedReason: z.string().max(200).optional(),
  timestamp: z.number().int().nonnegative().optional(),
  startedAt: isoTime.optional(),
  endedAt: isoTime.optional(),
  durationSeconds: z.number().nonnegative().optional(),
  summary: z.string().max(10_000).optional(),
  analysis: z.object({ summary: z.string().max(10_000).optional() }).optional(),
  recordingUrl: z.string().max(2048).optional(),
  artifact: z.object({ messages: z.array(spoken).max(10_000).optional(), recordingUrl: z.string().max(2048).optional() }).optional(),
  call: z.object({
    id: z.string().min(1).max(150),
    type: z.string().max(40).optional(),
    startedAt: isoTime.optional(),
    customer: phone,
    phoneNumber: phone,
  }),
  customer: phone,
  phoneNumber: phone,
});
type VapiMessage = z.infer<typeof messagePayload>;
const webhookPayload = z.object({ message: messagePayload });

type Loose = { message?: { phoneNumber?: { number?: unknown }; call?: { phoneNumber?: { number?: unknown } } } } | null;

/** Enough of the payload to find the tenant: the Vapi phone number the call came in on or went out from. */
function businessNumberOf(payload: unknown): string {
  const message = (payload as Loose)?.message;
  if (!message || typeof message !== "object") throw malformed("missing required field 'message'", "message");
  const raw = message.phoneNumber?.number ?? message.call?.phoneNumber?.number;
  const number = typeof raw === "string" ? toE164(raw) : null;
  if (!number)
    throw malformed("invalid field 'message.phoneNumber.number': not a phone number in E.164 (web calls have no number)", "message.phoneNumber.number");
  return number;
}

/** HMAC-SHA256 of the raw body, hex, compared in constant time. */
function signatureVerifies(raw: string, secret: string, header: string): boolean {
  const given = Buffer.from(
    header
      .trim()
      .replace(/^sha256=/i, "")
      .toLowerCase(),
    "utf8",
  );
  const expected = Buffer.from(createHmac("sha256", secret).update(raw, "utf8").digest("hex"), "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const directionOf = (message: VapiMessage): "inbound" | "outbound" => (message.call.type === "outboundPhoneCall" ? "outbound" : "inbound");

/** The customer's number as Vapi sent it: never refused for its format (stored as sent when it is no number, server/lib/sender-identifier.ts), only when missing. */
function customerNumberOf(message: VapiMessage): string {
  const raw = (message.customer?.number ?? message.call.customer?.number ?? "").trim();
  if (!raw) throw malformed("missing required field 'message.customer.number'", "message.customer.number");
  return raw;
}

/** The assistant's and the customer's turns, in order, each at its time in the call. */
function transcriptOf(message: VapiMessage, startedAt: Date): TranscriptTurn[] {
  const turns: TranscriptTurn[] = [];
  let last = startedAt.getTime();
  for (const [i, said] of (message.artifact?.messages ?? []).entries()) {
    const role = said.role === "bot" || said.role === "assistant" ? "assistant" : said.role === "user" ? "customer" : null;
    if (!role || !said.message?.trim()) continue;
    const field = `message.artifact.messages[${i}].${said.time === undefined ? "secondsFromStart" : "time"}`;
    const at =
      said.time !== undefined
        ? instantAt(said.time, field).getTime()
        : said.secondsFromStart === undefined
          ? 0
          : instantAfter(startedAt, said.secondsFromStart, field).getTime();
    last = Math.max(last + 1, at); // strictly increasing: the conversation lists turns as spoken
    turns.push({ role, text: said.message, at: instantAt(last, field) });
  }
  return turns;
}

/** Answered when the assistant spoke on an inbound call (a caller who hung up first abandoned it), the customer on an outbound one. */
function wasAnswered(message: VapiMessage): boolean {
  if (message.endedReason && NEVER_CONNECTED.has(message.endedReason)) return false;
  const said = message.artifact?.messages;
  if (!said) return true;
  const speaker = directionOf(message) === "inbound" ? ["bot", "assistant"] : ["user"];
  return said.some((m) => speaker.includes(m.role) && (m.message ?? "").trim() !== "");
}

/** The call report of a lifecycle message, or null for a message that changes nothing. */
function reportOf(message: VapiMessage): CallReport | null {
  const at = message.timestamp === undefined ? new Date() : instantAt(message.timestamp, "message.timestamp");
  const startedAt =
    message.startedAt !== undefined
      ? instantAt(Date.parse(message.startedAt), "message.startedAt")
      : message.call.startedAt !== undefined
        ? instantAt(Date.parse(message.call.startedAt), "message.call.startedAt")
        : at;
  const base = {
    provider: "vapi" as const,
    providerCallId: message.call.id,
    direction: directionOf(message),
    customerNumber: customerNumberOf(message),
    startedAt,
  };
  if (message.type === "status-update") {
    if (message.status === "in-progress") return { ...base, answeredAt: startedAt };
    return message.status === "ringing" || message.status === "queued" ? base : null;
  }
  if (message.type !== "end-of-call-report") return null;
  const endedAt = message.endedAt === undefined ? at : instantAt(Date.parse(message.endedAt), "message.endedAt");
  // A call cannot end before it starts; a start Vapi did not send is taken as no later than the end.
  const stated = message.startedAt !== undefined || message.call.startedAt !== undefined;
  if (stated && endedAt < startedAt) throw malformed("invalid field 'message.endedAt': must not be before the call's startedAt", "message.endedAt");
  const start = endedAt.getTime() < startedAt.getTime() ? endedAt : startedAt;
  const answered = wasAnswered(message);
  return {
    ...base,
    startedAt: start,
    answeredAt: answered ? start : null,
    ended: {
      at: endedAt,
      answered,
      reason: message.endedReason ?? null,
      durationSeconds:
        message.durationSeconds === undefined
          ? wholeSeconds((endedAt.getTime() - start.getTime()) / 1000, "message.endedAt")
          : wholeSeconds(message.durationSeconds, "message.durationSeconds"),
    },
    recordingUrl: message.artifact?.recordingUrl ?? message.recordingUrl ?? null,
    summary: message.analysis?.summary ?? message.summary ?? null,
    transcript: transcriptOf(message, start),
  };
}

export function handleVapiWebhook(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("vapi", req, async () => {
    const spec = {
      provider: "vapi" as const,
      signatureHeader: SIGNATURE_HEADER,
      businessNumberOf,
      verifies: (raw: string, credentials: { secret: string }, signature: string) => signatureVerifies(raw, credentials.secret, signature),
      payload: webhookPayload,
    };
    await receiveSignedCallWebhook(req, spec, async (connection, data) => {
      const report = reportOf(data.message);
      if (report) await applyCallReport(scopeToTenant(await getDb(), connection.tenantId), report, connection);
    });
    return jsonAnswer(200, { received: true });
  });
}
