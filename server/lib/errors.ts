// One error type for the whole service. Its `code` is the wire code of the error envelope
// `{ "error": { "code", "message" } }`; the HTTP status is derived from it here and nowhere else.
import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { ZodError, type core } from "zod";
import { isMissingFieldMessage } from "./field-messages";
import {
  DATABASE_BUSY_MESSAGE,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseBusy,
  isDatabaseUnavailable,
  isOutcomeUnknown,
  OUTCOME_UNKNOWN_MESSAGE,
  RETRY_AFTER_SECONDS,
} from "./database-errors";

export type ErrorCode = "bad_request" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "rate_limited" | "internal_error" | "outcome_unknown";

/** Every wire code, as the API documents list them. */
export const ERROR_CODES: ErrorCode[] = [
  "unauthorized",
  "forbidden",
  "rate_limited",
  "bad_request",
  "not_found",
  "conflict",
  "internal_error",
  "outcome_unknown",
];

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  internal_error: 500,
  outcome_unknown: 500,
};
const TRPC_CODE: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  bad_request: "BAD_REQUEST",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  rate_limited: "TOO_MANY_REQUESTS",
  internal_error: "INTERNAL_SERVER_ERROR",
  outcome_unknown: "INTERNAL_SERVER_ERROR",
};

export const MESSAGES = {
  malformedAuth: "missing or malformed Authorization header",
  unknownKey: "unknown or revoked api key",
  missingScope: (scope: string) => `key missing required scope '${scope}'`,
  notFound: "resource not found",
  tenantSuspended: "tenant suspended: its API keys, agent tools and dashboard are refused until an operator resumes it",
  internal: "internal server error",
} as const;

/** Extends TRPCError so the dashboard's tRPC endpoint maps it to the right code too. */
export class AppError extends TRPCError {
  readonly errorCode: ErrorCode;
  readonly status: number;
  /** The offending input field, when there is one (the dashboard shows it beside that field). */
  readonly field?: string;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { field?: string; status?: number; headers?: Record<string, string>; cause?: unknown } = {}) {
    super({ code: TRPC_CODE[code], message, cause: opts.cause });
    this.errorCode = code;
    this.status = opts.status ?? STATUS[code];
    this.field = opts.field;
    this.headers = opts.headers;
  }
}

/** A valid key or session of a suspended tenant (server/tenants/lifecycle.ts): 403 on every surface. */
export const tenantSuspended = () => new AppError("forbidden", MESSAGES.tenantSuspended);

export const badRequest = (message: string, field?: string) => new AppError("bad_request", message, { field });
export const notFound = () => new AppError("not_found", MESSAGES.notFound);
export const conflict = (message: string, field?: string) => new AppError("conflict", message, { field });

function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((p) => (typeof p === "number" ? `[${p}]` : String(p)))
    .join(".")
    .replace(/\.\[/g, "[");
}

/** Names the first offending field of a validation failure, e.g. `invalid field 'title': …`. */
export function fromZodError(err: ZodError): AppError {
  const issue = err.issues[0] as core.$ZodIssue;
  if (issue.code === "unrecognized_keys") {
    const key = [...issue.path, issue.keys[0]].map(String).join(".");
    return badRequest(issue.message.startsWith("field ") ? issue.message : `unknown field '${key}'`, key);
  }
  const field = fieldPath(issue.path);
  if (!field) return badRequest(issue.message);
  if (isMissingFieldMessage(issue.message)) return badRequest(`missing required field '${field}'`, field);
  return badRequest(`invalid field '${field}': ${issue.message}`, field);
}

/** The database cannot be reached: a 503 the client may retry, not a 500 (the code stays `internal_error`). */
const databaseUnavailable = (cause?: unknown) =>
  new AppError("internal_error", DATABASE_UNAVAILABLE_MESSAGE, { status: 503, headers: { "Retry-After": String(RETRY_AFTER_SECONDS) }, cause });

/** No pooled database connection came free in time: a 503 the client may retry (nothing was written), not a 500. */
const databaseBusy = (cause?: unknown) =>
  new AppError("internal_error", DATABASE_BUSY_MESSAGE, { status: 503, headers: { "Retry-After": String(RETRY_AFTER_SECONDS) }, cause });

/**
 * A write's connection was lost at its COMMIT: it may have committed. A 500 of its own code (not a
 * retryable 503): the client retries only with the same Idempotency-Key, whose stored answer
 * commits with the write (docs/contract.md).
 */
const outcomeUnknown = (cause?: unknown) => new AppError("outcome_unknown", OUTCOME_UNKNOWN_MESSAGE, { cause });

/** Whatever was thrown, the AppError the client is told about. Unknown errors become a bare 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof TRPCError && err.cause instanceof AppError) return err.cause;
  if (isOutcomeUnknown(err)) return outcomeUnknown(err);
  if (isDatabaseUnavailable(err)) return databaseUnavailable(err);
  if (isDatabaseBusy(err)) return databaseBusy(err);
  if (err instanceof ZodError) return fromZodError(err);
  if (err instanceof TRPCError) {
    if (err.cause instanceof ZodError) return fromZodError(err.cause);
    if (err.code === "BAD_REQUEST" || err.code === "PARSE_ERROR") return badRequest(err.message);
    if (err.code === "NOT_FOUND") return notFound();
  }
  return new AppError("internal_error", MESSAGES.internal, { cause: err });
}

export const errorBody = (e: AppError) => ({ error: { code: e.errorCode, message: e.message } });
