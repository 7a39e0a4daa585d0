// The trace exporter's own protobuf encoder (server/observability/otlp-protobuf.ts) against the
// SDK's serializer (@opentelemetry/otlp-transformer's ProtobufTraceSerializer, what
// @opentelemetry/exporter-trace-otlp-proto sends): for real SDK spans of every shape this service
// makes and more (every attribute value type, unicode, long strings, remote parents, trace state,
// error statuses, several scopes and resources, batches beyond the encoder's first buffer), the
// bytes are the same; what it does not encode itself (events, links) is still the SDK's encoding.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, type ReadableSpan, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { protobufFields, protobufMessages } from "../../scripts/bench/protobuf";
import { encodeTraceRequest, serializeSpans } from "../../server/observability/otlp-protobuf";

/** A provider whose ended spans land in `spans`. */
function collectingTracer(serviceName: string, spans: ReadableSpan[], scope = "test-scope", version?: string): Tracer {
  const collector: SpanExporter = {
    export: (batch, done) => {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName, "deployment.environment.name": "test" }),
    spanProcessors: [new SimpleSpanProcessor(collector)],
  });
  return provider.getTracer(scope, version);
}

const sdkBytes = (spans: ReadableSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
/** The encoder's own bytes (it throws rather than hand a batch to the SDK's serializer). */
const ourBytes = (spans: ReadableSpan[]) => Buffer.from(encodeTraceRequest(spans));

describe("the exporter's protobuf encoding", () => {
  it("writes_the_same_bytes_as_the_sdk_for_spans_with_every_attribute_type", () => {
    const spans: ReadableSpan[] = [];
    const tracer = collectingTracer("tdp-test", spans);
    const server = tracer.startSpan("GET /api/v1/offerings/{id}", {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": "GET",
        "url.path": "/api/v1/offerings/0b7c9e52-4d8f-4a51-9a0e-3c1f2b7d6e90",
        "user_agent.original": "Mozilla/5.0 — ünïcödé 🚀",
        "long.ascii": "x".repeat(300),
        "long.unicode": "é".repeat(200),
        "int.small": 7,
        "int.zero": 0,
        "int.negative": -42,
        "int.large": 2 ** 40 + 3,
        "double.value": 3.25,
        "double.nan": Number.NaN,
        "bool.true": true,
        "bool.false": false,
        "array.strings": ["a", "ß", ""],
        "array.numbers": [1, -2, 2.5],
        "array.bools": [true, false],
        "empty.string": "",
      },
    });
    server.setAttribute("http.response.status_code", 404);
    server.updateName("GET /api/v1/offerings/{id} (renamed)");
    const child = tracer.startSpan(
      "SELECT offerings",
      { kind: SpanKind.CLIENT, attributes: { "db.system.name": "postgresql" } },
      trace.setSpan(ROOT_CONTEXT, server),
    );
    child.setStatus({ code: SpanStatusCode.ERROR, message: "connection refused — retry" });
    child.end();
    const internal = tracer.startSpan("no kind given, no attributes");
    internal.setStatus({ code: SpanStatusCode.OK });
    internal.end();
    server.end();

    expect(spans).toHaveLength(3);
    expect(ourBytes(spans).toString("hex")).toBe(sdkBytes(spans).toString("hex"));
  });

  it("writes_the_same_bytes_for_a_remote_parent_with_trace_state", () => {
    const spans: ReadableSpan[] = [];
    const tracer = collectingTracer("tdp-test", spans);
    const carrier = {
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      tracestate: "vendor=value,other=x",
    };
    const parent = new W3CTraceContextPropagator().extract(ROOT_CONTEXT, carrier, {
      get: (c, k) => c[k as keyof typeof c],
      keys: (c) => Object.keys(c),
    });
    tracer.startSpan("POST /api/v1/offerings", { kind: SpanKind.SERVER }, parent).end();
    expect(spans).toHaveLength(1);
    expect(spans[0]!.parentSpanContext?.isRemote).toBe(true);
    expect(ourBytes(spans).equals(sdkBytes(spans))).toBe(true);
  });

  it("groups_spans_by_resource_and_scope_as_the_sdk_does", () => {
    const spans: ReadableSpan[] = [];
    const a = collectingTracer("service-a", spans, "scope-one", "1.2.3");
    const b = collectingTracer("service-b", spans, "scope-two");
    const a2 = collectingTracer("service-a", spans, "scope-three");
    for (let i = 0; i < 5; i++) {
      a.startSpan(`a ${i}`).end();
      b.startSpan(`b ${i}`, { attributes: { i } }).end();
      a2.startSpan(`a2 ${i}`).end();
    }
    expect(ourBytes(spans).equals(sdkBytes(spans))).toBe(true);
    // Two providers with equal attributes are still two resources (grouped by identity).
    const decoded = protobufMessages(ourBytes(spans), 1);
    expect(decoded).toHaveLength(3);
  });

  it("writes_the_same_bytes_for_a_batch_larger_than_its_first_buffer", () => {
    const spans: ReadableSpan[] = [];
    const tracer = collectingTracer("tdp-test", spans);
    for (let i = 0; i < 1500; i++) {
      const parent = tracer.startSpan(`GET /api/v1/items/{id} ${i}`, {
        kind: SpanKind.SERVER,
        attributes: { "request.id": `req-${i}`, text: "q".repeat(i % 300) },
      });
      tracer.startSpan("SELECT items", { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, parent)).end();
      parent.end();
    }
    const ours = ourBytes(spans);
    expect(ours.length).toBeGreaterThan(1 << 17);
    expect(ours.equals(sdkBytes(spans))).toBe(true);
    // Each span decodes to its own ids: the 3000 spans of the one resource and scope.
    const scopeSpans = protobufMessages(protobufMessages(ours, 1)[0]!, 2)[0]!;
    const decodedIds = protobufMessages(scopeSpans, 2).map((span) => {
      const fields = new Map([...protobufFields(span)].map(([n, v]) => [n, v]));
      return (fields.get(2) as Buffer).toString("hex");
    });
    expect(decodedIds).toEqual(spans.map((s) => s.spanContext().spanId));
  });

  it("leaves_spans_with_events_or_links_to_the_sdks_serializer", () => {
    const spans: ReadableSpan[] = [];
    const tracer = collectingTracer("tdp-test", spans);
    const linked = tracer.startSpan("linked");
    linked.end();
    const span = tracer.startSpan("with event and link", { links: [{ context: linked.spanContext(), attributes: { why: "batch" } }] });
    span.addEvent("retry", { attempt: 2 });
    span.recordException(new Error("boom"));
    span.end();
    expect(() => encodeTraceRequest(spans)).toThrow();
    expect(Buffer.from(serializeSpans(spans)).equals(sdkBytes(spans))).toBe(true);
  });
});
