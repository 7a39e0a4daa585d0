// Structured JSON log lines through pino, all on stderr: stdout belongs to command output (the CLI's JSON).
// A request's front opens a request scope (`withRequestLogger`): a child logger bound to its
// `request_id`, carried in the procedure context (`ctx.logger`) and, through AsyncLocalStorage,
// read by `log` itself, so every line written while the request runs (domain code included) carries
// its request id without threading a parameter. Field names are snake_case; an error goes in one
// `error` field (serialized once: type, message, code, stack, cause). Secrets are redacted by the
// configuration below whatever path they take; still, never pass one on purpose.
import "#server-only";
import { randomUUID } from "node:crypto";
import pino, { type Logger } from "pino";
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

// Through the console (to stderr): warnings by console.warn, everything else by console.error, as
// before pino, so in-process tests that capture the console still read every line.
const stderr = {
  write(line: string) {
    const text = line.endsWith("\n") ? line.slice(0, -1) : line;
    if (text.startsWith('{"level":"warn"')) console.warn(text);
    else console.error(text);
  },
};

let root: Logger | undefined;

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
    stderr,
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

/** What a request's code writes with (`ctx.logger`): a pino logger's level methods. */
export type RequestLog = Pick<Logger, "info" | "warn" | "error">;

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

export const log = {
  info: (msg: string, fields?: Fields) => currentLogger().info(fields ?? {}, msg),
  warn: (msg: string, fields?: Fields) => currentLogger().warn(fields ?? {}, msg),
  error: (msg: string, fields?: Fields) => currentLogger().error(fields ?? {}, msg),
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` when it is a sane token, else a new UUID (echoed on the answer). */
export function requestIdOf(headers: { get(name: string): string | null }): string {
  const incoming = headers.get("x-request-id");
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
