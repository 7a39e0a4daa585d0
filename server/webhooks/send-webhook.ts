// One HTTP attempt: POST the exact signed bytes through `guardedPost` (no redirects, one overall
// timeout, connection only to addresses that pass the target rules). Never throws: every failure
// becomes the attempt's error text.
import { randomUUID } from "node:crypto";
import { checkUrlShape, loopbackAllowed } from "../lib/target-url";
import { guardedPost } from "../lib/guarded-post";
import { signBody, standardWebhookSignature } from "./signing";
import { RESPONSE_BODY_LIMIT } from "./retry-ladder";

export type SendInput = {
  url: string;
  secret: string;
  /** The secret a roll replaced, during its overlap: every signature header then carries one signature per secret. */
  previousSecret?: string | null;
  /** The event's envelope as JSON text: the exact bytes signed and sent. */
  body: string;
  eventId: string;
  eventType: string;
  timeoutMs: number;
  /** `x-delivery-id`, also the attempt row's id. */
  attemptId?: string;
  /** Called once the request is written (not for a target refused before sending). */
  onWritten?: () => void;
  /** The attempt resumes one a stopped worker had started: sent with `webhook-possible-repeat: true`. */
  possibleRepeat?: boolean;
};

export type SendResult = {
  attemptId: string;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
  /** The headers sent (none when the target was refused before sending). */
  requestHeaders: Record<string, string> | null;
  /** The answer's `Retry-After` header (honoured on a 429), as received. */
  retryAfter?: string | null;
  /** The target rules refused the URL or the address it resolved to: nothing was sent. */
  refused?: boolean;
};

/**
 * The header on an attempt that repeats one a worker started and never recorded (it stopped or died
 * in between): the consumer may have received this event already. De-duplicate on `webhook-id`.
 */
const POSSIBLE_REPEAT_HEADER = "webhook-possible-repeat";

function buildHeaders(input: SendInput, attemptId: string, nowSeconds: number): Record<string, string> {
  const previous = input.previousSecret;
  const signature = standardWebhookSignature(input.secret, input.eventId, nowSeconds, input.body);
  // Built in one order, property by property (no spreads): every attempt's headers share one shape.
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "tenant-data-platform-webhooks/1",
    "x-webhook-signature": signBody(input.secret, input.body),
  };
  if (previous) headers["x-webhook-signature-previous"] = signBody(previous, input.body);
  headers["x-event-type"] = input.eventType;
  headers["x-delivery-id"] = attemptId;
  headers["webhook-id"] = input.eventId;
  headers["webhook-timestamp"] = String(nowSeconds);
  // Standard Webhooks: space-separated signatures; a verifier accepts any one that matches its secret.
  headers["webhook-signature"] = previous ? `${signature} ${standardWebhookSignature(previous, input.eventId, nowSeconds, input.body)}` : signature;
  if (input.possibleRepeat) headers[POSSIBLE_REPEAT_HEADER] = "true";
  return headers;
}

/**
 * The shape rules' verdict per URL string (and loopback setting): parsing and judging the same few
 * target URLs again at every attempt is wasted work at thousands of deliveries a second. Only the
 * verdict is kept; the addresses a name resolves to are still judged at every connection
 * (guardedPost's lookup). Bounded.
 */
const shapes = { loopback: new Map<string, UrlShape>(), strict: new Map<string, UrlShape>() };
type UrlShape = ReturnType<typeof checkUrlShape>;
function urlShape(raw: string): UrlShape {
  const allowLoopback = loopbackAllowed();
  const known = allowLoopback ? shapes.loopback : shapes.strict;
  let shape = known.get(raw);
  if (!shape) {
    if (known.size >= 1000) known.clear();
    shape = checkUrlShape(raw, allowLoopback);
    known.set(raw, shape);
  }
  return shape;
}

export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const attemptId = input.attemptId ?? randomUUID();
  const started = performance.now();
  let requestHeaders: Record<string, string> | null = null;
  const done = (r: Omit<SendResult, "attemptId" | "durationMs" | "requestHeaders">): SendResult => ({
    attemptId,
    durationMs: Math.round(performance.now() - started),
    requestHeaders,
    ...r,
  });

  const shape = urlShape(input.url);
  if ("reason" in shape) return done({ statusCode: null, responseBody: null, error: refusal(`refused target: url ${shape.reason}`), refused: true });
  requestHeaders = buildHeaders(input, attemptId, Math.floor(Date.now() / 1000));
  const result = await guardedPost(shape.url, {
    headers: requestHeaders,
    // As text: sent with the request's head in one write.
    body: input.body,
    timeoutMs: input.timeoutMs,
    onWritten: input.onWritten,
    // Only the first RESPONSE_BODY_LIMIT characters are kept; stop reading well past that.
    keepBytes: RESPONSE_BODY_LIMIT * 4,
    maxBytes: 64 * 1024,
  });
  if (!result.ok) {
    const refused = result.reason === "refused";
    return done({ statusCode: null, responseBody: null, error: refused ? refusal(result.error) : result.error, ...(refused ? { refused } : {}) });
  }
  return done({ statusCode: result.statusCode, responseBody: result.body.slice(0, RESPONSE_BODY_LIMIT), error: null, retryAfter: result.retryAfter });
}

/** A refusal's text for the delivery log: the guard's reason, and how to allow loopback for local testing. */
function refusal(reason: string): string {
  return /loopback|https URL/.test(reason)
    ? `${reason} (loopback and plain-http targets are allowed only with WEBHOOK_ALLOW_LOOPBACK=1, for local testing)`
    : reason;
}
