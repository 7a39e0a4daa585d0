// The one classification of the errors that mean "the database is unreachable": every surface
// answers them 503 with Retry-After instead of a 500 (errors.ts), and the breaker in
// server/db/availability.ts opens on them. And of those that mean "the database is busy" (every
// pooled connection in use for longer than a request may wait for one): a 503 with Retry-After
// too, but the breaker stays closed, since the server is answering. No import of a driver here: it is a leaf.

/** Seconds a client is told to wait (`Retry-After`) while the database is unreachable. */
export const RETRY_AFTER_SECONDS = 2;
export const DATABASE_UNAVAILABLE_MESSAGE = "the database is unavailable; retry in a few seconds";

export const DATABASE_BUSY_MESSAGE = "the database is busy; retry in a few seconds";

/** Thrown by database calls while the breaker is open. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  constructor() {
    super(DATABASE_UNAVAILABLE_MESSAGE);
  }
}

/** The watchdog (server/db/watchdog.ts) gave a pool up: no call on it was answered within the query timeout and its margin. */
export class DatabaseTimeoutError extends Error {
  override name = "DatabaseTimeoutError";
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms`);
  }
}

export const OUTCOME_UNKNOWN_MESSAGE =
  "the database did not confirm whether this write was saved; retry only with the same Idempotency-Key (the retry answers what happened), or look the record up before writing it again";

/**
 * A write whose connection was lost while its COMMIT (or, outside a transaction, the write itself)
 * was on its way: PostgreSQL may have committed it, or not. Never a plain "retry" (a client that
 * retries creates a duplicate when it had committed): errors.ts answers it with its own code.
 */
export class DatabaseOutcomeUnknownError extends Error {
  override name = "DatabaseOutcomeUnknownError";
  constructor(cause: unknown) {
    super(OUTCOME_UNKNOWN_MESSAGE, { cause });
  }
}

/** Error codes that mean the connection, not the statement, failed. */
const CONNECTION_CODES = new Set([
  // sockets
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // postgres.js
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections (08xxx below)
  "57P01",
  "57P02",
  "57P03",
  "53300",
  // Prisma: can't reach, timed out, server closed the connection
  "P1001",
  "P1002",
  "P1017",
]);
/** What @prisma/adapter-pg calls a connection failure (`meta.driverAdapterError.cause.kind`). */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/** node-postgres reports these as plain errors without a code. */
const PG_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable)|Query read timeout/;

/**
 * Waiting for a pooled connection took too long: node-postgres's pool (a queued checkout past
 * connectionTimeoutMillis; opening a new connection that times out is "Connection terminated due to
 * connection timeout", above), Prisma starting a transaction past its `maxWait` (P2028 with this
 * message; P2028 also names other transaction failures) and Prisma's own pool (P2024).
 */
const BUSY_MESSAGES = /^timeout exceeded when trying to connect|Unable to start a transaction in the given time/;
const BUSY_CODES = new Set(["P2024"]);
/**
 * PostgreSQL's own bounds (client.ts, sessionTimeouts): a statement cancelled by statement_timeout
 * (57014, "canceling statement due to statement timeout") or a lock not granted within lock_timeout
 * (55P03). The server answered and rolled the statement's transaction back: nothing was written,
 * the database is busy, not down.
 */
const SERVER_TIMEOUT_CODES = new Set(["57014", "55P03"]);

const isConnectionCode = (code: unknown) => typeof code === "string" && (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code));
/**
 * PostgreSQL itself rejecting a message (08P01 with the server's source routine, e.g. a Bind that
 * does not match the prepared statement of that name on a pooled connection): the server answered,
 * so it is a client-side bug (a 500), not an outage. A pooler's own 08P01 (PgBouncer's wait
 * timeout, no server to connect to) names no routine and still counts as one.
 */
const isServerRejectedMessage = (err: object) => {
  const e = err as { code?: unknown; routine?: unknown };
  return e.code === "08P01" && typeof e.routine === "string" && e.routine !== "";
};

/** True when `err` (or an error it wraps) says the database could not be reached or dropped the connection. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  if (err instanceof DatabaseUnavailableError || err instanceof DatabaseTimeoutError) return true;
  if (err instanceof DatabaseOutcomeUnknownError) return false;
  if (isServerRejectedMessage(err)) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } } };
  if (isConnectionCode(e.code)) return true;
  const adapter = e.meta?.driverAdapterError?.cause;
  if (adapter && ((typeof adapter.kind === "string" && ADAPTER_KINDS.has(adapter.kind)) || isConnectionCode(adapter.code))) return true;
  if (typeof e.message === "string" && PG_MESSAGES.test(e.message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/** A connection not opened within the connect timeout (postgres.js, node-postgres), or the watchdog giving a silent server up. */
const TIMEOUT_MESSAGES = /^Connection terminated due to connection timeout|timeout expired/;
export function isDatabaseTimeout(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  if (err instanceof DatabaseTimeoutError) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (e.code === "CONNECT_TIMEOUT") return true;
  if (typeof e.message === "string" && TIMEOUT_MESSAGES.test(e.message)) return true;
  return isDatabaseTimeout(e.cause, depth + 1);
}

/** True when `err` (or an error it wraps) says no pooled connection came free in time, or PostgreSQL's statement or lock timeout cancelled the statement: the database is busy, not down. */
export function isDatabaseBusy(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  if (err instanceof DatabaseOutcomeUnknownError) return false;
  const e = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown } } };
  };
  if (typeof e.code === "string" && (BUSY_CODES.has(e.code) || SERVER_TIMEOUT_CODES.has(e.code))) return true;
  const adapter = e.meta?.driverAdapterError?.cause;
  if (adapter && (SERVER_TIMEOUT_CODES.has(String(adapter.originalCode)) || SERVER_TIMEOUT_CODES.has(String(adapter.code)))) return true;
  if (typeof e.message === "string" && BUSY_MESSAGES.test(e.message)) return true;
  return isDatabaseBusy(e.cause, depth + 1);
}

/** Whether a statement's text changes rows: INSERT, UPDATE or DELETE, also inside a WITH (not a SELECT … FOR UPDATE). */
const WRITES = /\b(?:insert\s+into|(?<!for\s+)update\s+"?\w|delete\s+from)/i;
export const statementWrites = (text: string) => WRITES.test(text);

/** Failures before a statement could reach the server (no connection, the breaker open): nothing ran. */
const BEFORE_SENDING = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "CONNECT_TIMEOUT", "57P03", "53300"]);
export function neverReachedTheServer(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && BEFORE_SENDING.has(code);
}

/** True when `err` (or an error it wraps) is a write whose outcome the database did not confirm. */
export function isOutcomeUnknown(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  if (err instanceof DatabaseOutcomeUnknownError || (err as { name?: unknown }).name === "DatabaseOutcomeUnknownError") return true;
  return isOutcomeUnknown((err as { cause?: unknown }).cause, depth + 1);
}
