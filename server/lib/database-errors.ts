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

/** A database call got no answer within DATABASE_QUERY_TIMEOUT_MS (a paused or overwhelmed server). */
export class DatabaseTimeoutError extends Error {
  override name = "DatabaseTimeoutError";
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms`);
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
  if (isServerRejectedMessage(err)) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } } };
  if (isConnectionCode(e.code)) return true;
  const adapter = e.meta?.driverAdapterError?.cause;
  if (adapter && ((typeof adapter.kind === "string" && ADAPTER_KINDS.has(adapter.kind)) || isConnectionCode(adapter.code))) return true;
  if (typeof e.message === "string" && PG_MESSAGES.test(e.message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/** True when `err` (or an error it wraps) says no pooled connection came free in time: the database is busy, not down. */
export function isDatabaseBusy(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === "string" && BUSY_CODES.has(e.code)) return true;
  if (typeof e.message === "string" && BUSY_MESSAGES.test(e.message)) return true;
  return isDatabaseBusy(e.cause, depth + 1);
}
