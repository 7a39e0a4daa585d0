// The CRM driver interface: one call, "create this record", against a provider's HTTP API.
import { guardedPost } from "../../lib/guarded-post";

export type { CrmProvider } from "./providers";

export type CrmFieldValue = string | number | boolean | null;

type CrmCreateRequest = {
  baseUrl: string;
  token: string;
  object: string;
  /** Already translated to the CRM's keys. */
  properties: Record<string, CrmFieldValue>;
  idempotencyKey?: string;
  /** HubSpot only: the unique-value property that carries the idempotency key. */
  idempotencyProperty?: string;
  timeoutMs: number;
};

export type CrmDriver = (req: CrmCreateRequest) => Promise<{ recordId: string }>;

/**
 * The upstream CRM failed (error status, timeout, unreachable, unreadable answer). `detail` is for
 * the log only and never holds the credentials.
 */
export class CrmUpstreamError extends Error {
  constructor(readonly detail: { reason: string; status?: number; body?: string }) {
    super(`CRM upstream failed: ${detail.reason}${detail.status ? ` (HTTP ${detail.status})` : ""}`);
    this.name = "CrmUpstreamError";
  }
}

const BODY_LOG_CHARS = 300;
/** A record-creation answer is small; a larger one is cut off (and then fails to parse). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * POSTs JSON with a bearer token and a timeout; returns the parsed 2xx JSON body. The base URL is
 * tenant-set, so the call goes through the webhook target guard (never into our own network, the
 * check made in the connection's own DNS lookup), and redirects are not followed (a create must
 * not be replayed elsewhere with our Authorization header).
 */
export async function postJson(url: string, body: unknown, opts: { token: string; timeoutMs: number; headers?: Record<string, string> }): Promise<unknown> {
  const result = await guardedPost(new URL(url), {
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      authorization: `Bearer ${opts.token}`,
      ...opts.headers,
    },
    body: Buffer.from(JSON.stringify(body), "utf8"),
    timeoutMs: opts.timeoutMs,
    keepBytes: MAX_RESPONSE_BYTES,
    maxBytes: MAX_RESPONSE_BYTES,
  });
  if (!result.ok) {
    if (result.reason === "timeout") throw new CrmUpstreamError({ reason: `timed out after ${opts.timeoutMs} ms` });
    throw new CrmUpstreamError({ reason: result.reason === "refused" ? result.error : `request failed: ${result.error.replace(/^network error: /, "")}` });
  }
  const status = result.statusCode;
  const text = result.body;
  // An error body could echo what we sent; strip the token before it can reach a log line.
  const snippet = () => text.slice(0, BODY_LOG_CHARS).split(opts.token).join("[redacted]");
  if (status < 200 || status > 299) throw new CrmUpstreamError({ reason: "error status", status, body: snippet() });
  try {
    return JSON.parse(text);
  } catch {
    throw new CrmUpstreamError({ reason: "response is not JSON", status, body: snippet() });
  }
}

/** A record id from an upstream answer: a non-empty string or a finite number. */
export function recordIdOf(value: unknown): string | null {
  if (typeof value === "string" && value.trim()) return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

export const joinUrl = (base: string, ...segments: string[]) => `${base.replace(/\/+$/, "")}/${segments.map(encodeURIComponent).join("/")}`;
