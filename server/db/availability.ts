// Whether the database can be reached, as this process sees it. One classification of the errors
// that mean "PostgreSQL is unreachable" (every surface answers them 503 with Retry-After instead of
// a 500), and a circuit breaker: once such an error is seen, a probe checks the server on a
// connection of its own; while it fails, database calls fail at once (no request waits for a
// connection that cannot come), and the probe keeps checking so calls resume within
// PROBE_INTERVAL_MS of the server's return. No import of a driver here: server/errors.ts uses it.
import { log } from "../shared/log";

/** Seconds a client is told to wait (`Retry-After`) while the database is unreachable. */
export const RETRY_AFTER_SECONDS = 2;
export const DATABASE_UNAVAILABLE_MESSAGE = "the database is unavailable; retry in a few seconds";
const PROBE_INTERVAL_MS = 500;

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
  // Prisma: can't reach, timed out, server closed the connection, pool timeout
  "P1001",
  "P1002",
  "P1017",
  "P2024",
]);
/** What @prisma/adapter-pg calls a connection failure (`meta.driverAdapterError.cause.kind`). */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/** node-postgres reports these as plain errors without a code. */
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)|Query read timeout/;

const isConnectionCode = (code: unknown) => typeof code === "string" && (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code));

/** True when `err` (or an error it wraps) says the database could not be reached or dropped the connection. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 6) return false;
  if (err instanceof DatabaseUnavailableError || err instanceof DatabaseTimeoutError) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } } };
  if (isConnectionCode(e.code)) return true;
  const adapter = e.meta?.driverAdapterError?.cause;
  if (adapter && ((typeof adapter.kind === "string" && ADAPTER_KINDS.has(adapter.kind)) || isConnectionCode(adapter.code))) return true;
  if (typeof e.message === "string" && PG_MESSAGES.test(e.message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

type Probe = () => Promise<void>;
// On globalThis: Next's bundled copy of this module and the lean front's copy share one process.
const state = globalThis as { __tenantDataDbProbe?: Probe | null; __tenantDataDbDown?: boolean; __tenantDataDbProbing?: Promise<void> | null };

/** Registers how to check the server (client.ts, on opening PostgreSQL); `null` on close. */
export function watchDatabase(probe: Probe | null): void {
  state.__tenantDataDbProbe = probe;
  state.__tenantDataDbDown = false;
}

/** Fails at once while the database is known to be unreachable. */
export function assertDatabaseReachable(): void {
  if (state.__tenantDataDbDown) throw new DatabaseUnavailableError();
}

export const databaseKnownDown = () => state.__tenantDataDbDown === true;

/** Called with a failed call's error: a connection failure starts the probe (if none is running). */
export function noteDatabaseError(err: unknown): void {
  const probe = state.__tenantDataDbProbe;
  if (!probe || state.__tenantDataDbProbing || !isDatabaseUnavailable(err)) return;
  state.__tenantDataDbProbing = probeUntilReachable(probe).finally(() => {
    state.__tenantDataDbProbing = null;
  });
}

async function probeUntilReachable(probe: Probe): Promise<void> {
  while (state.__tenantDataDbProbe === probe) {
    try {
      await probe();
      if (state.__tenantDataDbDown) log.info("database reachable again");
      state.__tenantDataDbDown = false;
      return;
    } catch (err) {
      if (state.__tenantDataDbProbe !== probe) return;
      if (!state.__tenantDataDbDown) {
        log.warn("database unreachable: answering 503 until it is back", { error: err instanceof Error ? err.message : String(err) });
      }
      state.__tenantDataDbDown = true;
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
  }
}
