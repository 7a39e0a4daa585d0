// What every receiver shares: the raw body read with a bound (the signature covers the bytes as
// received, so they are kept exactly), the error envelope, the log line of a refused request (never
// its body), and the one place a failure becomes an answer: a receiver never answers 500 for
// anything a caller sent.
import { AppError, errorBody, toAppError } from "../shared/errors";
import { log } from "../shared/log";
import { publicBaseUrl } from "../channels/receiver-settings";

/** The most a provider's request may carry; bigger is a 413 (code `bad_request`), unread. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const tooLarge = () => new AppError("bad_request", `request body larger than ${MAX_WEBHOOK_BODY_BYTES} bytes (1 MiB)`, { status: 413 });

/** The body's exact bytes as text (UTF-8), read up to the bound. */
export async function readRawBody(req: Request): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_WEBHOOK_BODY_BYTES) throw tooLarge();
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_WEBHOOK_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export const missingSignature = (header: string) => new AppError("unauthorized", `missing ${header} header`);
export const badSignature = (header: string) => new AppError("forbidden", `${header} does not verify`);
export const unknownAddress = (what: string) => new AppError("not_found", `no active channel connection for ${what}`);
export const malformed = (message: string, field?: string) => new AppError("bad_request", message, { field });

/**
 * The URL a provider signed: the public one (PUBLIC_BASE_URL + path and query as received), since
 * behind a proxy or load balancer the Host this server sees is not the one the provider called.
 */
export function signedUrl(req: Request): string {
  const url = new URL(req.url);
  const base = publicBaseUrl();
  return base ? `${base}${url.pathname}${url.search}` : url.href;
}

export function jsonAnswer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/**
 * Runs a receiver: a refusal becomes its status with the error envelope, logged (provider, path,
 * status, reason; never the body); anything unexpected becomes the generic 500 (or 503 while the
 * database is unreachable) and is logged as an error.
 */
export async function answerReceiver(provider: string, req: Request, work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (err) {
    const error = toAppError(err);
    const fields = { provider, path: new URL(req.url).pathname, status: error.status, reason: error.message };
    if (error.errorCode === "internal_error")
      log.error("webhook receiver failed", { ...fields, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    else log.warn("webhook request refused", fields);
    const response = jsonAnswer(error.status, errorBody(error));
    for (const [name, value] of Object.entries(error.headers ?? {})) response.headers.set(name, value);
    return response;
  }
}
