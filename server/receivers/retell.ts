// Retell AI receiver (voice): POST /api/webhooks/retell, the JSON events `call_started`,
// `call_ended` and `call_analyzed`, each carrying the whole call. Checked in this order, nothing
// stored before the signature verifies:
//   JSON body (400) -> x-retell-signature present (401) -> the business number (the called number of
//   an inbound call, the calling one of an outbound call) has an active retell connection (404) ->
//   `verify` of retell-sdk over the raw body with that connection's API key (403) -> the payload (400).
// The call lifecycle, transcript and end-of-call report are the calls service's; other events
// (transcript updates…) are acknowledged and change nothing. Answered 200 `{"received":true}`.
import { verify } from "retell-sdk/lib/webhook_auth";
import { z } from "zod";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { toE164 } from "../lib/customer-identifier";
import { applyCallReport, type CallReport, type TranscriptTurn } from "../calls/calls.service";
import { receiveSignedCallWebhook } from "./signed-call-webhook";
import { answerReceiver, jsonAnswer, malformed, type ReceiverAnswer, type ReceiverRequest } from "./receiver-http";
import { MAX_INBOUND_BODY } from "./twilio";
import { instantAfter, instantAt, wholeSeconds } from "./provider-values";

const SIGNATURE_HEADER = "x-retell-signature";
const LIFECYCLE_EVENTS = new Set(["call_started", "call_ended", "call_analyzed"]);

/** Disconnection reasons of a call that never reached a person and the assistant together. */
const NEVER_CONNECTED = new Set([
  "dial_busy",
  "dial_failed",
  "dial_no_answer",
  "invalid_destination",
  "user_declined",
  "registered_call_timeout",
  "error_user_not_joined",
  "concurrency_limit_reached",
  "no_concurrency_fallback",
  "no_valid_payment",
  "marked_as_spam",
  "scam_detected",
  "telephony_provider_permission_denied",
  "telephony_provider_unavailable",
  "sip_routing_error",
  "voicemail_reached",
  "ivr_reached",
]);

/** Epoch milliseconds; the years they fall in are checked where they become instants (provider-values.ts). */
const epochMs = z.number().int().nonnegative();

const callPayload = z.object({
  call_id: z.string().min(1).max(150),
  direction: z.enum(["inbound", "outbound"], { message: "must be inbound or outbound" }),
  from_number: z.string().max(40),
  to_number: z.string().max(40),
  call_status: z.string().max(40).optional(),
  start_timestamp: epochMs.optional(),
  end_timestamp: epochMs.optional(),
  duration_ms: z.number().int().nonnegative().optional(),
  disconnection_reason: z.string().max(100).optional(),
  recording_url: z.string().max(2048).nullable().optional(),
  transcript_object: z
    .array(
      z.object({
        role: z.string().max(40),
        content: z.string().max(MAX_INBOUND_BODY),
        words: z.array(z.object({ start: z.number().nonnegative().optional() })).optional(),
      }),
    )
    .max(10_000)
    .optional(),
  call_analysis: z.object({ call_summary: z.string().max(10_000).optional() }).optional(),
});
type RetellCall = z.infer<typeof callPayload>;

const webhookPayload = z.object({ event: z.string().max(100), call: callPayload });

/** Enough of the payload to find the tenant: the business number of the call. */
function businessNumberOf(payload: unknown): string {
  const call = (payload as { call?: { direction?: unknown; from_number?: unknown; to_number?: unknown } } | null)?.call;
  if (!call || typeof call !== "object") throw malformed("missing required field 'call'", "call");
  const field = call.direction === "outbound" ? "from_number" : "to_number";
  const raw = call[field];
  const number = typeof raw === "string" ? toE164(raw) : null;
  if (!number) throw malformed(`invalid field 'call.${field}': not a phone number in E.164`, `call.${field}`);
  return number;
}

/** Turns of the assistant and the customer, in order, each at its time in the call. */
function transcriptOf(call: RetellCall, startedAt: Date): TranscriptTurn[] {
  const turns: TranscriptTurn[] = [];
  let last = startedAt.getTime();
  for (const [i, utterance] of (call.transcript_object ?? []).entries()) {
    const role = utterance.role === "agent" ? "assistant" : utterance.role === "user" ? "customer" : null;
    if (!role || !utterance.content.trim()) continue;
    const offset = utterance.words?.[0]?.start;
    const field = `call.transcript_object[${i}].words[0].start`;
    // Strictly increasing, so the conversation lists the turns in the order they were spoken.
    last = Math.max(last + 1, offset === undefined ? 0 : instantAfter(startedAt, offset, field).getTime());
    turns.push({ role, text: utterance.content, at: instantAt(last, field) });
  }
  return turns;
}

/**
 * Whether the call was answered: an inbound call when the assistant spoke (a caller who hung up
 * before it did abandoned the call), an outbound one when the customer spoke; without a transcript,
 * by the disconnection reason.
 */
function wasAnswered(call: RetellCall): boolean {
  if (call.disconnection_reason && NEVER_CONNECTED.has(call.disconnection_reason)) return false;
  if (call.call_status === "not_connected") return false;
  if (!call.transcript_object) return true;
  const speaker = call.direction === "inbound" ? "agent" : "user";
  return call.transcript_object.some((u) => u.role === speaker && u.content.trim() !== "");
}

function reportOf(event: string, call: RetellCall, customerNumber: string): CallReport {
  const endedAt = call.end_timestamp === undefined ? null : instantAt(call.end_timestamp, "call.end_timestamp");
  // Without a start, the call began when it is reported, or when it ended if that was earlier.
  const startedAt =
    call.start_timestamp === undefined
      ? new Date(Math.min(Date.now(), endedAt?.getTime() ?? Infinity))
      : instantAt(call.start_timestamp, "call.start_timestamp");
  // A call cannot end before it starts (an end of 0 would be stored as ending in 1970).
  if (endedAt && endedAt < startedAt) throw malformed("invalid field 'call.end_timestamp': must not be before call.start_timestamp", "call.end_timestamp");
  const report: CallReport = {
    provider: "retell",
    providerCallId: call.call_id,
    direction: call.direction,
    customerNumber,
    startedAt,
    // Retell connects the call to the assistant when it starts.
    answeredAt: startedAt,
  };
  if (event === "call_started") return report;
  const end = endedAt ?? new Date();
  return {
    ...report,
    ended: {
      at: end,
      answered: wasAnswered(call),
      reason: call.disconnection_reason ?? null,
      // Without Retell's own duration, the time from start to end (what the duration column must also hold).
      durationSeconds:
        call.duration_ms === undefined
          ? wholeSeconds((end.getTime() - startedAt.getTime()) / 1000, "call.end_timestamp")
          : wholeSeconds(call.duration_ms / 1000, "call.duration_ms"),
    },
    recordingUrl: call.recording_url ?? null,
    summary: call.call_analysis?.call_summary ?? null,
    transcript: transcriptOf(call, startedAt),
  };
}

export function handleRetellWebhook(req: ReceiverRequest): Promise<ReceiverAnswer> {
  return answerReceiver("retell", req, async () => {
    const spec = {
      provider: "retell" as const,
      signatureHeader: SIGNATURE_HEADER,
      businessNumberOf,
      verifies: (raw: string, credentials: { api_key: string }, signature: string) => verify(raw, credentials.api_key, signature),
      payload: webhookPayload,
    };
    await receiveSignedCallWebhook(req, spec, async (connection, { event, call }) => {
      if (!LIFECYCLE_EVENTS.has(event)) return;
      // The customer's number is never refused for its format (a short code, a withheld caller's
      // "anonymous": stored as sent, server/lib/sender-identifier.ts), only when blank.
      const customerNumber = (call.direction === "inbound" ? call.from_number : call.to_number).trim();
      if (!customerNumber) {
        const field = call.direction === "inbound" ? "from_number" : "to_number";
        throw malformed(`invalid field 'call.${field}': must not be blank`, `call.${field}`);
      }
      const db = scopeToTenant(await getDb(), connection.tenantId);
      await applyCallReport(db, reportOf(event, call, customerNumber), connection);
    });
    return jsonAnswer(200, { received: true });
  });
}
