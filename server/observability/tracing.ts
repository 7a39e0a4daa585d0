// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of the SDK is
// loaded and every helper below runs its work straight away (one boolean test). On, `startTracing`
// registers the SDK's tracer provider (batched OTLP/HTTP export, protobuf unless
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json, the W3C trace-context
// propagator, an AsyncLocalStorage context manager) and:
// - each inbound request is a SERVER span named by its route template (`GET /api/v1/offerings/{id}`),
//   continuing the caller's `traceparent` when it sends one (`traceRequest`);
// - each database statement is a CLIENT child span (`traceDbCall`, from server/db/database.ts);
// - each CRM call and each webhook attempt is a CLIENT span (`traceClientCall`); an attempt joins
//   the trace of the request that caused its event (`traceParentNow` is stored with the event);
// - log lines carry `trace_id` and `span_id` (server/lib/log.ts).
// The exporter, sampler and batch settings are the SDK's own OTEL_* variables (see the README).
import { randomBytes } from "node:crypto";
import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_USER_AGENT_ORIGINAL,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from "@opentelemetry/semantic-conventions";
import { currentRequestId, setTraceFieldsSource } from "../lib/log";
import { setting } from "../lib/settings";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ADMITTED_BY_HEAD_SAMPLER, TracesPerSecondSampler } from "./trace-sampler";

let tracer: Tracer | undefined;
let propagator: TextMapPropagator | undefined;
/** The default sampler (OTEL_TRACES_SAMPLER unset), asked before a request begins a new trace (see traceRequest). */
let headSampler: TracesPerSecondSampler | undefined;
let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;
let starting: Promise<void> | undefined;

/** Whether spans are being recorded (the hot paths test this one boolean). */
export const tracingEnabled = (): boolean => tracer !== undefined;

/** Once per process, before serving: registers the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
export function startTracing(): Promise<void> {
  if (!setting("OTEL_EXPORTER_OTLP_ENDPOINT") && !setting("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) return Promise.resolve();
  starting ??= register();
  return starting;
}

async function register(): Promise<void> {
  const [
    { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler },
    exporter,
    { defaultResource, resourceFromAttributes },
    { W3CTraceContextPropagator },
    { AsyncLocalStorageContextManager },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    sdkTraceExporter(),
    import("@opentelemetry/resources"),
    import("@opentelemetry/core"),
    import("@opentelemetry/context-async-hooks"),
  ]);
  // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), _TRACES_ENDPOINT and _HEADERS itself;
  // the provider OTEL_TRACES_SAMPLER(_ARG) when it is set (else ours: ./trace-sampler); the batch processor OTEL_BSP_*.
  const sdk = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: setting("OTEL_SERVICE_NAME") })),
    spanProcessors: [new BatchSpanProcessor(exporter)],
    ...(setting("OTEL_TRACES_SAMPLER") === undefined
      ? { sampler: new ParentBasedSampler({ root: (headSampler = new TracesPerSecondSampler(setting("TRACES_PER_SECOND"))) }) }
      : {}),
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagator = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(propagator);
  trace.setGlobalTracerProvider(sdk);
  provider = sdk;
  tracer = trace.getTracer("tenant-data-platform");
  setTraceFieldsSource((into) => {
    const span = trace.getSpan(context.active());
    if (!span) return;
    const { traceId, spanId } = span.spanContext();
    into.trace_id = traceId;
    into.span_id = spanId;
  });
}

/**
 * The SDK's OTLP/HTTP trace exporter: JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json, else protobuf,
 * built as @opentelemetry/exporter-trace-otlp-proto builds its exporter (the same export delegate
 * with the SDK's protobuf serializer), from packages already here.
 */
async function sdkTraceExporter(): Promise<SpanExporter> {
  if (setting("OTEL_EXPORTER_OTLP_PROTOCOL") === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter();
  }
  const [{ OTLPExporterBase }, { convertLegacyHttpOptions, createOtlpHttpExportDelegate }, { ProtobufTraceSerializer, TraceExporterMetricsHelper }] =
    await Promise.all([
      import("@opentelemetry/otlp-exporter-base"),
      import("@opentelemetry/otlp-exporter-base/node-http"),
      import("@opentelemetry/otlp-transformer"),
    ]);
  const options = convertLegacyHttpOptions({}, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, ProtobufTraceSerializer, "otlp_http_span_exporter", TraceExporterMetricsHelper, undefined));
}

/** Graceful stop: the spans still batched are exported (bounded by the exporter's timeout). */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  tracer = undefined;
  provider = undefined;
  starting = undefined;
  propagator = undefined;
  headSampler = undefined;
  setTraceFieldsSource(undefined);
  try {
    await stopping?.shutdown();
  } finally {
    // The API's globals are released, so that a later startTracing registers afresh.
    trace.disable();
    context.disable();
    propagation.disable();
  }
}

// ---------- inbound requests ----------

/** What a request span needs of the request: its method, target (a path or an absolute URL) and a header lookup. */
export type TracedRequest = { method: string; target: string; headers: { get(name: string): string | null } };

/** The path of a request target, without its query. */
function pathOf(target: string): string {
  let path = target;
  if (!path.startsWith("/")) {
    try {
      path = new URL(target).pathname;
    } catch {
      return "";
    }
  }
  const q = path.indexOf("?");
  return q === -1 ? path : path.slice(0, q);
}
/** What the answer says: its status and the route template it matched (never the raw path). */
export type TracedAnswer = { status: number; route: string };

const headerGetter: TextMapGetter<TracedRequest["headers"]> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

/**
 * Runs one inbound request in a SERVER span: a child of the caller's `traceparent` when it sent a
 * valid one, else a new trace. `readAnswer` reads the status and route template off the answer; the
 * span is named `METHOD route` once it is known (`fallbackRoute` for a request that threw).
 * A new trace the default sampler leaves out (most requests of a busy process) gets no span and
 * enters no context: it runs as with tracing off, its statements and log lines outside any trace
 * (the events it emits carry an unsampled `traceparent`, see traceParentNow). A non-recording span
 * and the context around it would be work per request for nothing exported.
 */
export function traceRequest<T>(
  req: TracedRequest,
  fallbackRoute: string,
  requestId: string,
  run: () => Promise<T>,
  readAnswer: (answer: T) => TracedAnswer,
): Promise<T> {
  if (!tracer) return run();
  // Most requests send no `traceparent`: then there is nothing to extract.
  const active = context.active();
  let parent: Context;
  if (req.headers.get("traceparent") !== null) parent = propagator!.extract(active, req.headers, headerGetter);
  else if (!headSampler) parent = active;
  else if (headSampler.admit()) parent = active.setValue(ADMITTED_BY_HEAD_SAMPLER, true);
  else return run();
  return traceInSpan(tracer, req, fallbackRoute, requestId, parent, run, readAnswer);
}

async function traceInSpan<T>(
  tracer: Tracer,
  req: TracedRequest,
  fallbackRoute: string,
  requestId: string,
  parent: Context,
  run: () => Promise<T>,
  readAnswer: (answer: T) => TracedAnswer,
): Promise<T> {
  const method = req.method.toUpperCase();
  const span = tracer.startSpan(`${method} ${fallbackRoute}`, { kind: SpanKind.SERVER }, parent);
  // A caller's unsampled `traceparent` is followed: its span records nothing.
  if (span.isRecording()) {
    const userAgent = req.headers.get("user-agent");
    span.setAttributes({
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_URL_PATH]: pathOf(req.target),
      "request.id": requestId,
      ...(userAgent ? { [ATTR_USER_AGENT_ORIGINAL]: userAgent.slice(0, 256) } : {}),
    });
  }
  try {
    const answer = await context.with(trace.setSpan(parent, span), run);
    if (!span.isRecording()) return answer;
    const { status, route } = readAnswer(answer);
    span.updateName(`${method} ${route}`);
    span.setAttribute(ATTR_HTTP_ROUTE, route);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute(ATTR_ERROR_TYPE, String(status));
    return answer;
  } catch (err) {
    span.setAttribute(ATTR_HTTP_ROUTE, fallbackRoute);
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** The request's span learns its tenant once the caller is authenticated. */
export function noteSpanTenant(tenantId: string): void {
  if (tracer) trace.getSpan(context.active())?.setAttribute("tenant.id", tenantId);
}

/**
 * The active span as a W3C `traceparent` (stored with an event, so the deliveries it causes join
 * this trace), or null when tracing is off or nothing is being traced.
 */
export function traceParentNow(): string | null {
  if (!tracer) return null;
  const span = trace.getSpan(context.active());
  // In a request the sampler left out (see traceRequest): its deliveries are left out too.
  if (!span) return currentRequestId() === null ? null : unsampledTraceParent();
  const carrier: Record<string, string> = {};
  propagator!.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/** A `traceparent` of a trace nobody records (the sampled flag unset): what joins it is not recorded either. */
function unsampledTraceParent(): string {
  const ids = randomBytes(24).toString("hex");
  return `00-${ids.slice(0, 32)}-${ids.slice(32)}-00`;
}

/** A well-formed version-00 `traceparent` whose sampled flag is unset. */
const leftOut = (traceParent: string) => traceParent.length === 55 && (Number.parseInt(traceParent.slice(53), 16) & 1) === 0;

// ---------- outbound work ----------

function failed(span: Span, err: unknown): void {
  const name = err instanceof Error ? err.name : "Error";
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 200) : undefined });
  span.setAttribute(ATTR_ERROR_TYPE, name);
}

/**
 * A CLIENT span around an outbound call (a CRM request, a webhook attempt). `parentTraceParent`
 * (a stored `traceparent`) makes it a child in that trace instead of the active one. `finish` may
 * add attributes from the result (its status code); a thrown error marks the span failed.
 */
export async function traceClientCall<T>(
  name: string,
  attributes: Attributes,
  run: () => Promise<T>,
  opts: { parentTraceParent?: string | null; finish?: (result: T, span: Span) => void } = {},
): Promise<T> {
  if (!tracer) return run();
  // Caused by a request the default sampler left out (see traceParentNow): no span, as for that request.
  if (headSampler && opts.parentTraceParent && leftOut(opts.parentTraceParent)) return run();
  const parent = opts.parentTraceParent
    ? propagator!.extract(context.active(), { traceparent: opts.parentTraceParent }, defaultTextMapGetter)
    : context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), run);
    opts.finish?.(result, span);
    return result;
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

// ---------- database ----------

/** What a statement's spans share, worked out once per statement text (see `dbSpanShape`). */
type DbSpanShape = { name: string; attributes: Attributes; text: string };
const dbShapes = new Map<string, DbSpanShape>();
const DB_SHAPES_MAX = 2000;
const OPERATION = /^\s*(?:\/\*[\s\S]*?\*\/\s*)?([A-Za-z]+)/;
/** The statement's first table: after FROM, INTO, UPDATE or JOIN (a quoted or schema-qualified name too). */
const COLLECTION = /\b(?:FROM|INTO|UPDATE|JOIN)\s+((?:"[^"]+"|[A-Za-z_][\w$]*)(?:\.(?:"[^"]+"|[A-Za-z_][\w$]*))?)/i;

/**
 * A statement's span name and attributes: its summary (`SELECT offerings`: the operation and first
 * table, semconv's `db.query.summary`) names the span and is an attribute with the operation. The SQL text
 * is attached only to a failed statement's span: on every span it was most of the export's bytes,
 * and the summary names the statement well enough until something goes wrong. Worked out once per
 * statement text (bounded: ad-hoc texts beyond it are worked out each time).
 */
function dbSpanShape(sql: string): DbSpanShape {
  const known = dbShapes.get(sql);
  if (known) return known;
  const operation = OPERATION.exec(sql)?.[1]?.toUpperCase() ?? "SQL";
  const collection = COLLECTION.exec(sql)?.[1]?.replaceAll('"', "");
  const name = collection ? `${operation} ${collection}` : operation;
  const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL, [ATTR_DB_OPERATION_NAME]: operation, [ATTR_DB_QUERY_SUMMARY]: name };
  const shape = { name, attributes: Object.freeze(attributes), text: sql.length > 2000 ? `${sql.slice(0, 2000)}…` : sql };
  if (dbShapes.size < DB_SHAPES_MAX) dbShapes.set(sql, shape);
  return shape;
}

/**
 * A database call as a CLIENT span, when a traced request or attempt is running (statements outside
 * any trace, the worker's claims and the probes, make no root spans of their own). A raw statement
 * is named by its summary (its text is attached when it fails; parameters only, never values); a
 * Prisma call by its operation and model. The call runs in the request's context, not the span's:
 * nothing inside a driver call makes spans, and a context per statement is work on every query.
 */
export function traceDbCall<T>(call: { sql: string } | { model?: string; operation: string; args?: unknown }, run: () => Promise<T>): Promise<T> {
  if (!tracer) return run();
  const parent = context.active();
  // Outside a trace, or in a request the sampler left out (its statements would be left out too).
  if (!trace.getSpan(parent)?.isRecording()) return run();
  // Prisma's `$queryRawUnsafe(text, ...values)` is a statement like any other.
  const sql = "sql" in call ? call.sql : "args" in call && Array.isArray(call.args) && typeof call.args[0] === "string" ? call.args[0] : undefined;
  let shape: DbSpanShape | undefined;
  let span: Span;
  if (sql !== undefined) {
    shape = dbSpanShape(sql);
    span = tracer.startSpan(shape.name, { kind: SpanKind.CLIENT, attributes: shape.attributes }, parent);
  } else {
    const { model, operation } = call as { model?: string; operation: string };
    const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL, [ATTR_DB_OPERATION_NAME]: operation };
    if (model) attributes[ATTR_DB_COLLECTION_NAME] = model;
    span = tracer.startSpan(model ? `${operation} ${model}` : operation, { kind: SpanKind.CLIENT, attributes }, parent);
  }
  return run().then(
    (result) => {
      span.end();
      return result;
    },
    (err) => {
      if (shape) span.setAttribute(ATTR_DB_QUERY_TEXT, shape.text);
      failed(span, err);
      span.end();
      throw err;
    },
  );
}
