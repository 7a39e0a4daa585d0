// The CRM driver interface: one call, "create this record", against a provider's HTTP API.
import { refusedHostReason } from "../../webhooks/target-url";

export { CRM_PROVIDERS, type CrmProvider } from "./providers";

export type CrmFieldValue = string | number | boolean | null;

export type CrmCreateRequest = {
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
  constructor(
    readonly detail: { reason: string; status?: number; body?: string },
  ) {
    super(`CRM upstream failed: ${detail.reason}${detail.status ? ` (HTTP ${detail.status})` : ""}`);
    this.name = "CrmUpstreamError";
  }
}

const BODY_LOG_CHARS = 300;

/**
 * POSTs JSON with a bearer token and a timeout; returns the parsed 2xx JSON body. Redirects are
 * refused (a create must not be replayed elsewhere with our Authorization header).
 */
export async function postJson(
  url: string,
  body: unknown,
  opts: { token: string; timeoutMs: number; headers?: Record<string, string> },
): Promise<unknown> {
  // The base URL is tenant-set: never call into our own network (checked per call, as DNS changes).
  const refused = await refusedHostReason(new URL(url).hostname);
  if (refused) throw new CrmUpstreamError({ reason: `refused target: ${refused}` });
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        authorization: `Bearer ${opts.token}`,
        ...opts.headers,
      },
      body: JSON.stringify(body),
      redirect: "error",
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === "TimeoutError") throw new CrmUpstreamError({ reason: `timed out after ${opts.timeoutMs} ms` });
    throw new CrmUpstreamError({ reason: `request failed: ${e.cause?.code ?? e.message}` });
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    const e = err as Error;
    throw new CrmUpstreamError({ reason: e.name === "TimeoutError" ? `timed out after ${opts.timeoutMs} ms` : "response body unreadable", status: res.status });
  }
  // An error body could echo what we sent; strip the token before it can reach a log line.
  const snippet = () => text.slice(0, BODY_LOG_CHARS).split(opts.token).join("[redacted]");
  if (!res.ok) throw new CrmUpstreamError({ reason: "error status", status: res.status, body: snippet() });
  try {
    return JSON.parse(text);
  } catch {
    throw new CrmUpstreamError({ reason: "response is not JSON", status: res.status, body: snippet() });
  }
}

/** A record id from an upstream answer: a non-empty string or a finite number. */
export function recordIdOf(value: unknown): string | null {
  if (typeof value === "string" && value.trim()) return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

export const joinUrl = (base: string, ...segments: string[]) =>
  `${base.replace(/\/+$/, "")}/${segments.map(encodeURIComponent).join("/")}`;
