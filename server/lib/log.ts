// Structured JSON log lines through pino, written by pino itself to the process's stdout (one line
// each, as a log collector reads a service's output). A command whose stdout is its answer (the CLI's
// JSON, `npm run migrate`) sends them to stderr instead: its entry calls `setLogDestination(2)` first.
// One call shape, pino's: `log.info({ ...fields }, "message")` (or `log.info("message")`).
// A request's front opens a request scope (`withRequestLogger`): a child logger bound to its
// `request_id`, carried in the procedure context (`ctx.logger`) and, through AsyncLocalStorage,
// read by `log` itself, so every line written while the request runs (domain code included) carries
// its request id without threading a parameter. Field names are snake_case; an error goes in one
// `error` field (serialized once: type, message, code, stack, cause). Secrets are redacted by the
// configuration below whatever path they take; still, never pass one on purpose.
import "#server-only";
import { randomUUID } from "node:crypto";
import pino, { type DestinationStream, type Logger } from "pino";
import { setting } from "./settings";

export type { Logger };
type Fields = Record<string, unknown>;

/** Field paths whose values are replaced by "[redacted]" (a header map, a body, a detail object one or two levels down). */
export const REDACTED_PATHS = ["authorization", "cookie", "api_key", "key", "secret", "token", "auth_token", "password", "credentials"].flatMap((name) => [
  name,
  `*.${name}`,
  `*.*.${name}`,
]);

/** An error as one `error` field: type, message, code, stack and its causes (three deep); a non-error as its text. */
export function serializeError(err: unknown, depth = 0): Fields {
  if (!(err instanceof Error)) return { message: typeof err === "string" ? err : String(err) };
  const { code, errorCode } = err as { code?: unknown; errorCode?: unknown };
  const serialized: Fields = { type: err.name, message: err.message };
  if (code !== undefined || errorCode !== undefined) serialized.code = code ?? errorCode;
  serialized.stack = err.stack;
  if (err.cause !== undefined && depth < 3) serialized.cause = serializeError(err.cause, depth + 1);
  return serialized;
}

let root: Logger | undefined;

/** Where lines go: a file descriptor (1 stdout, 2 stderr) or a stream (an in-process test's reader). */
export type LogDestination = 1 | 2 | DestinationStream;
let destination: LogDestination = 1;

/**
 * Points the process's lines at `to` from the next line on (loggers made before keep theirs): the
 * CLI's entry sends them to stderr (2) before anything logs; in-process tests read them from a stream.
 */
export function setLogDestination(to: LogDestination): void {
  destination = to;
  root = undefined;
}

/**
 * A file descriptor as pino's own synchronous destination (a line is written before the next
 * statement runs, so nothing is lost to a `process.exit`, and lines stay in order with other output);
 * in development on a terminal, pino-pretty's readable lines instead when it is installed (a dev
 * dependency). In a browser bundle (see requestScope below) pino has no destinations: none.
 */
function streamOf(to: LogDestination): DestinationStream | undefined {
  if (typeof to !== "number") return to;
  if (process.env.NODE_ENV === "development" && process.getBuiltinModule?.("node:tty").isatty(to)) {
    const pretty = prettyStream(to);
    if (pretty) return pretty;
  }
  return pino.destination?.({ dest: to, sync: true });
}

function prettyStream(fd: number): DestinationStream | undefined {
  try {
    // Resolved from the project at run time: neither Next nor the server's bundle packs it, and a
    // production install without dev dependencies simply writes JSON.
    const require = process.getBuiltinModule("node:module").createRequire(`${process.cwd()}/`);
    const pretty = require("pino-pretty") as (options: object) => DestinationStream;
    return pretty({ destination: fd, sync: true, translateTime: "SYS:HH:MM:ss.l" });
  } catch {
    return undefined;
  }
}

/**
 * Writes the active span's `trace_id` and `span_id` into a line's fields: set by the tracing module
 * when traces are on (server/observability/tracing.ts); unset, a line carries no trace fields and
 * costs nothing more.
 */
let traceFields: ((into: Fields) => void) | undefined;
export function setTraceFieldsSource(source: typeof traceFields): void {
  traceFields = source;
}

/**
 * Fields every line gets from where it is written: the request's tenant once it is authenticated,
 * and the active span's `trace_id`/`span_id` when tracing is on. One fresh object per written line
 * (pino merges the line's own fields into it); nothing runs for a line below LOG_LEVEL.
 */
function contextFields(): Fields {
  const fields: Fields = {};
  const tenantId = requestScope.getStore()?.tenantId;
  if (tenantId !== undefined) fields.tenant_id = tenantId;
  traceFields?.(fields);
  return fields;
}

/** The process's logger, at LOG_LEVEL (read each time: one memoized lookup; tests change it at run time). */
export function rootLogger(): Logger {
  const level = setting("LOG_LEVEL");
  root ??= pino(
    {
      level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { error: serializeError },
      mixin: contextFields,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    },
    streamOf(destination),
  );
  if (root.level !== level) root.level = level;
  return root;
}

/**
 * Wire schemas (`*.types.ts`, through pagination.ts) bring this module into the dashboard's browser
 * bundle, where `node:async_hooks` cannot be bundled: the scope comes from Node's built-in module at
 * run time, and in a browser (never serving a request) there is none.
 */
const asyncHooks = typeof process !== "undefined" ? process.getBuiltinModule?.("node:async_hooks") : undefined;
/** What a request's scope holds: its logger and id, and its tenant once authenticated. */
export type Scope = { logger: Logger; requestId: string; tenantId?: string };
/**
 * Carries the scope along a request's async work. Its own AsyncLocalStorage, with tracing on too:
 * on Node 24 an AsyncLocalStorage costs nothing per promise (async context frames), and a request the
 * trace sampler leaves out then enters no trace context at all (server/observability/tracing.ts).
 */
const requestScope: { run<T>(scope: Scope, run: () => T): T; getStore(): Scope | undefined } = asyncHooks
  ? new asyncHooks.AsyncLocalStorage<Scope>()
  : { run: (_scope, run) => run(), getStore: () => undefined };

/** A request's logger: every line carries `request_id` (and `fields`, snake_case). */
export function requestLogger(requestId: string, fields?: Fields): Logger {
  return rootLogger().child({ request_id: requestId, ...fields });
}

/** What a request's code writes with (`ctx.logger`, `log`): a pino logger's level methods, fields first. */
export type RequestLog = Pick<Logger, "debug" | "info" | "warn" | "error">;

/**
 * A request's scope, which is also its `RequestLog`: the request's pino child is made when something
 * first logs (most requests log nothing, and a child per request, its bindings serialized and its
 * redaction set up, was a measurable share of the CPU of every API call and every received
 * message). One object per request, its methods on the prototype: no closures per request.
 */
class RequestScope implements Scope, RequestLog {
  private made: Logger | undefined = undefined;
  tenantId: string | undefined = undefined;
  constructor(readonly requestId: string) {}
  get logger(): Logger {
    return (this.made ??= requestLogger(this.requestId));
  }
  debug(...args: unknown[]): void {
    (this.logger.debug as (...args: unknown[]) => void)(...args);
  }
  info(...args: unknown[]): void {
    (this.logger.info as (...args: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]): void {
    (this.logger.warn as (...args: unknown[]) => void)(...args);
  }
  error(...args: unknown[]): void {
    (this.logger.error as (...args: unknown[]) => void)(...args);
  }
}

/** Runs one request's work in its scope: `log` (and `ctx.logger`) write with its request id. */
export function withRequestLogger<T>(requestId: string, run: (logger: RequestLog) => T): T {
  const scope = new RequestScope(requestId);
  return requestScope.run(scope, () => run(scope));
}

/** The same scope for work that takes no logger argument (the receivers). */
export function withRequestScope<T>(requestId: string, run: () => T): T {
  return withRequestLogger(requestId, () => run());
}

/**
 * Runs background work (a webhook attempt) in a scope of its own whose lines carry `fields`
 * (its delivery and event ids), as a request's carry its request id.
 */
export function withLogFields<T>(fields: Fields, run: () => T): T {
  // The child is made on the first line written: most attempts write none, and a child costs its
  // fields' serialization and redaction (hundreds of attempts a second).
  const parent = currentLogger();
  let logger: Logger | undefined;
  const scope: Scope = {
    get logger() {
      logger ??= parent.child(fields);
      return logger;
    },
    requestId: "",
  };
  return requestScope.run(scope, run);
}

/** The logger of the request running now, or the process's outside any request. */
export const currentLogger = (): Logger => requestScope.getStore()?.logger ?? rootLogger();

/** The id of the request running now (null outside any request). */
export const currentRequestId = (): string | null => requestScope.getStore()?.requestId || null;

/** The request running now is authenticated as `tenantId`: its later lines carry `tenant_id`. */
export function noteRequestTenant(tenantId: string): void {
  const scope = requestScope.getStore();
  if (scope) scope.tenantId = tenantId;
}

/** A level method of the logger current where it is called (a request's, else the process's). */
const atLevel =
  (level: keyof RequestLog) =>
  (...args: unknown[]): void =>
    (currentLogger()[level] as (...args: unknown[]) => void)(...args);

/** Writes with the current logger, pino's call shape: `log.warn({ error: err, tenant_id }, "what happened")`. */
export const log = { debug: atLevel("debug"), info: atLevel("info"), warn: atLevel("warn"), error: atLevel("error") } as RequestLog;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` when it is a sane token, else a new UUID (echoed on the answer). */
export function requestIdOf(headers: { get(name: string): string | null }): string {
  const incoming = headers.get("x-request-id");
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
