// What every receiver shares: the request as any front hands it over (`ReceiverRequest`: the lean
// front builds one straight from node:http, the Next route file from a Fetch Request), the raw body
// read with a bound (the signature covers the bytes as received, so they are kept exactly), the
// answer (`ReceiverAnswer`, complete text written in one go), the error envelope, the log line of a
// refused request (never its body), and the one place a failure becomes an answer: a receiver never
// answers 500 for anything a caller sent.
import { AppError, errorBody, toAppError } from "../lib/errors";
import { readBodyUpTo, type RequestBody } from "../lib/request-body";
import { log } from "../lib/log";
import { countReceiverAnswer } from "../observability/metrics";
import { publicBaseUrl } from "../channels/receiver-settings";

/** What a receiver reads of a request, whichever front received it. */
export type ReceiverRequest = {
  method: string;
  /** The URL the client called (scheme and host as this server saw them, path and query as sent). */
  url: URL;
  /** Case-insensitive lookup over node's parsed headers (both fronts parse them alike). */
  headers: { get(name: string): string | null };
  /** The body's bytes, chunk by chunk; leaving the iteration early discards the rest unread. */
  body: RequestBody | null;
  /** The socket's remote address, when the front has one (the lean front); see server/lib/client-ip.ts. */
  remoteAddress?: string | null;
};

/** An answer: status, headers (lower-case names) and the complete body text. */
export type ReceiverAnswer = { status: number; headers: Record<string, string>; body: string };

/** The most a provider's request may carry; bigger is a 413 (code `bad_request`), unread. */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const tooLarge = () => new AppError("bad_request", `request body larger than ${MAX_WEBHOOK_BODY_BYTES} bytes (1 MiB)`, { status: 413 });

/** The body's exact bytes as text (UTF-8), read up to the bound. */
export async function readRawBody(req: ReceiverRequest): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_WEBHOOK_BODY_BYTES) throw tooLarge();
  if (!req.body) return "";
  const bytes = await readBodyUpTo(req.body, MAX_WEBHOOK_BODY_BYTES);
  if (!bytes) throw tooLarge();
  return bytes.toString("utf8");
}

export const missingSignature = (header: string) => new AppError("unauthorized", `missing ${header} header`);
export const badSignature = (header: string) => new AppError("forbidden", `${header} does not verify`);
export const unknownAddress = (what: string) => new AppError("not_found", `no active channel connection for ${what}`);
export const malformed = (message: string, field?: string) => new AppError("bad_request", message, { field });

/**
 * The URL a provider signed: the public one (PUBLIC_BASE_URL + path and query as received), since
 * behind a proxy or load balancer the Host this server sees is not the one the provider called.
 */
export function signedUrl(req: ReceiverRequest): string {
  const base = publicBaseUrl();
  return base ? `${base}${req.url.pathname}${req.url.search}` : req.url.href;
}

export function textAnswer(status: number, contentType: string, body: string): ReceiverAnswer {
  return { status, headers: { "content-type": contentType }, body };
}

export function jsonAnswer(status: number, body: unknown): ReceiverAnswer {
  return textAnswer(status, "application/json", JSON.stringify(body));
}

/**
 * Runs a receiver: a refusal becomes its status with the error envelope, logged (provider, path,
 * status, reason; never the body); anything unexpected becomes the generic 500 (or 503 while the
 * database is unreachable) and is logged as an error.
 */
export async function answerReceiver(provider: string, req: ReceiverRequest, work: () => Promise<ReceiverAnswer>): Promise<ReceiverAnswer> {
  try {
    return countReceiverAnswer(provider, await work());
  } catch (err) {
    const error = toAppError(err);
    const fields = { provider, path: req.url.pathname, status: error.status, reason: error.message };
    if (error.errorCode === "internal_error") log.error({ ...fields, error: err }, "webhook receiver failed");
    else log.warn(fields, "webhook request refused");
    const answer = jsonAnswer(error.status, errorBody(error));
    for (const [name, value] of Object.entries(error.headers ?? {})) answer.headers[name.toLowerCase()] = value;
    return countReceiverAnswer(provider, answer);
  }
}
