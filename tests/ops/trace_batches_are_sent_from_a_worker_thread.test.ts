// The protobuf trace exporter encodes a batch in the server's thread and sends it from a worker
// thread running the SDK's OTLP/HTTP exporter (server/observability/otlp-protobuf.ts): the server's
// thread makes no HTTP client request of its own, which would share Node's http and stream internals
// with the requests it serves (docs/perf/2026-11-metrics-and-tracing-cost.md). The batch arrives intact, with the
// OTEL_EXPORTER_OTLP_HEADERS the SDK reads, and the exporter reports the collector's failures (and,
// its worker stopped, fails at once).
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otlpProtobufTraceExporter, serializeSpans } from "../../server/observability/otlp-protobuf";

type Received = { path: string; headers: IncomingHttpHeaders; body: Buffer };
let collector: Server;
const received: Received[] = [];
let answerStatus = 200;
const clientRequestsInThisThread: unknown[] = [];
const onClientRequest = (message: unknown) => clientRequestsInThisThread.push(message);

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answerStatus, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = "x-collector-token=abc123";
  subscribe("http.client.request.start", onClientRequest);
});

afterAll(async () => {
  unsubscribe("http.client.request.start", onClientRequest);
  await new Promise((resolve) => collector?.close(resolve));
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
});

describe("the protobuf trace exporter", () => {
  it("sends_each_batch_from_a_worker_thread_with_the_sdks_settings_and_reports_a_failed_export", async () => {
    const exporter = await otlpProtobufTraceExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer("tdp-test");
    const spans: Parameters<typeof serializeSpans>[0] = [];
    const span = tracer.startSpan("GET /api/v1/offerings", { attributes: { "http.route": "/api/v1/offerings" } });
    span.end();
    spans.push(span as unknown as (typeof spans)[number]);
    await provider.forceFlush();

    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ path: "/v1/traces", headers: { "content-type": "application/x-protobuf", "x-collector-token": "abc123" } });
    expect(received[0]!.body.equals(Buffer.from(serializeSpans(spans)))).toBe(true);
    // Not one HTTP client request was made in this thread.
    expect(clientRequestsInThisThread).toEqual([]);

    // A collector refusing the batch (400: not retried) fails the export, as the SDK's exporter reports it.
    answerStatus = 400;
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans as never, resolve));
    expect(result.code).toBe(1);
    expect(result.error?.message).toMatch(/400|Bad Request/);
    expect(received).toHaveLength(2);
    await provider.shutdown();

    // Its worker gone, a later export fails at once rather than waiting for an answer that cannot come.
    const late = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans as never, resolve));
    expect(late).toMatchObject({ code: 1, error: { message: "the trace export worker stopped" } });
    expect(received).toHaveLength(2);
  });
});
