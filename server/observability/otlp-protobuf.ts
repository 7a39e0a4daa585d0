// The OTLP/HTTP protobuf trace exporter, with an encoder of our own. The SDK's exporter
// (@opentelemetry/exporter-trace-otlp-proto) encodes each batch twice (a size-estimating pass, then
// the write), byte by byte, with a fresh array per id: about half of the CPU in OpenTelemetry's code per
// request. This encoder writes the same bytes (tests/ops/otlp_protobuf_encoding_matches_the_sdks.test.ts
// compares them with the SDK's own serializer) in one pass into a reused buffer. Everything else is
// the SDK's: the HTTP transport, its OTEL_EXPORTER_OTLP_* settings (endpoint, headers, timeout,
// compression), retries and the response's decoding, run in a worker thread (WorkerSpanExporter).
// A batch holding something this encoder does not write (span events or links, bytes or map
// attribute values: none of this service's spans have them) is encoded by the SDK's serializer instead.
import type { HrTime, SpanContext } from "@opentelemetry/api";
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import type { ExportResult } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { startEvalWorker } from "../lib/eval-worker";
import { log } from "../lib/log";

type Resource = ReadableSpan["resource"];
type Scope = ReadableSpan["instrumentationScope"];

/** Thrown by the encoder for what it does not write: the batch goes to the SDK's serializer. */
class NotEncodable extends Error {}

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = HEX[65 + i] = 10 + i;

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;
const varintSize = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);
/** The span-context flags the SDK writes: the trace flags, and whether the parent was remote. */
const spanFlags = (context: SpanContext, parentRemote: boolean | undefined) => (context.traceFlags & 0xff) | 0x100 | (parentRemote ? 0x200 : 0);

/**
 * Writes protobuf into one buffer, grown as needed and kept for the next batch. (A class, not
 * module-level variables: a module's `let` bindings are checked on every access, and this is all
 * accesses to `buf` and `pos`.)
 */
class Writer {
  buf = Buffer.allocUnsafe(1 << 16);
  pos = 0;

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** A varint of 0..2^32-1 (capacity ensured by the caller). */
  varint32(v: number): void {
    const buf = this.buf;
    let pos = this.pos;
    while (v > 0x7f) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** An int64 varint (negative numbers as ten bytes of two's complement), as the SDK's writer does. */
  varint64(value: number): void {
    this.ensure(10);
    if (value >= 0 && value <= 0xffffffff) {
      this.varint32(value);
      return;
    }
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    const buf = this.buf;
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low & 0x7f;
  }

  /** Reserves `reserved` bytes for a nested message's length; `finish` writes it (moving the message when its length needs more or fewer bytes). */
  begin(reserved: number): number {
    this.ensure(reserved);
    this.pos += reserved;
    return this.pos;
  }
  finish(bodyStart: number, reserved: number): void {
    const length = this.pos - bodyStart;
    if (length < 0x80 && reserved === 1) {
      this.buf[bodyStart - 1] = length;
      return;
    }
    const size = varintSize(length);
    if (size !== reserved) {
      this.ensure(size - reserved);
      this.buf.copyWithin(bodyStart + size - reserved, bodyStart, this.pos);
      this.pos += size - reserved;
    }
    const buf = this.buf;
    let at = bodyStart - reserved;
    let v = length;
    while (v > 0x7f) {
      buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[at] = v;
  }

  /** A field's tag: one byte below field 16, two from 16 (the span's flags) on. */
  tag(field: number, wireType: number): void {
    this.ensure(2);
    const v = (field << 3) | wireType;
    if (v < 0x80) this.buf[this.pos++] = v;
    else {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      this.buf[this.pos++] = v >>> 7;
    }
  }

  /** A length-delimited string: ASCII copied in a loop (most strings here are short), anything else through Buffer's UTF-8 encoder. */
  string(s: string): void {
    const n = s.length;
    if (n < 0x80) {
      this.ensure(n + 1);
      const buf = this.buf;
      const lengthAt = this.pos;
      let pos = lengthAt + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        buf[pos++] = c;
      }
      if (i === n) {
        buf[lengthAt] = n;
        this.pos = pos;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, "utf8");
    this.ensure(bytes + 5);
    this.varint32(bytes);
    this.pos += this.buf.write(s, this.pos, bytes, "utf8");
  }

  /** A hex id as bytes (16 for a trace, 8 for a span). */
  id(hex: string): void {
    const n = hex.length >> 1;
    if (hex.length !== n * 2 || n > 0x7f) throw new NotEncodable("not an id");
    this.ensure(n + 1);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = n;
    for (let i = 0; i < hex.length; i += 2) {
      const hi = HEX[hex.charCodeAt(i)] ?? -1;
      const lo = HEX[hex.charCodeAt(i + 1)] ?? -1;
      if (hi < 0 || lo < 0) throw new NotEncodable("not a hex id");
      buf[pos++] = (hi << 4) | lo;
    }
    this.pos = pos;
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(v >>> 0, this.pos);
  }

  /** [seconds, nanoseconds] as a fixed64 of nanoseconds, exact (the product exceeds 2^53). */
  hrTime(t: HrTime): void {
    const seconds = t[0];
    const nanos = t[1];
    const fromLow = (seconds & 0xffff) * 1e9;
    const fromHigh = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (fromLow >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + nanos;
    const high = Math.floor(fromLow / 0x100000000) + ((fromHigh / 0x10000) >>> 0) + Math.floor(low / 0x100000000);
    this.ensure(8);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.pos = this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
  }

  /** An AnyValue's fields (the caller wrote its tag and length). null and undefined write none, as the SDK's. */
  anyValue(value: unknown): void {
    switch (typeof value) {
      case "string":
        this.tag(1, 2);
        this.string(value);
        return;
      case "boolean":
        this.ensure(2);
        this.buf[this.pos++] = (2 << 3) | 0;
        this.buf[this.pos++] = value ? 1 : 0;
        return;
      case "number":
        if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
          this.tag(3, 0);
          this.varint64(value);
          return;
        }
        this.tag(4, 1);
        this.ensure(8);
        this.pos = this.buf.writeDoubleLE(value, this.pos);
        return;
      case "undefined":
        return;
      default: {
        if (value === null) return;
        if (!Array.isArray(value)) throw new NotEncodable("bytes or map attribute value");
        this.tag(5, 2);
        const array = this.begin(1);
        for (const item of value) {
          this.tag(1, 2);
          const element = this.begin(1);
          this.anyValue(item);
          this.finish(element, 1);
        }
        this.finish(array, 1);
      }
    }
  }

  /** Each attribute as a repeated KeyValue in field `field`. */
  attributes(attrs: Record<string, unknown>, field: number): void {
    for (const key in attrs) {
      if (!Object.hasOwn(attrs, key)) continue;
      this.tag(field, 2);
      const kv = this.begin(1);
      this.tag(1, 2);
      this.string(key);
      this.tag(2, 2);
      const value = this.begin(1);
      this.anyValue(attrs[key]);
      this.finish(value, 1);
      this.finish(kv, 1);
    }
  }

  span(s: ReadableSpan): void {
    if (s.events.length > 0 || s.links.length > 0) throw new NotEncodable("events or links");
    const context = s.spanContext();
    const parent = s.parentSpanContext;
    this.tag(1, 2);
    this.id(context.traceId);
    this.tag(2, 2);
    this.id(context.spanId);
    const traceState = context.traceState?.serialize();
    if (traceState) {
      this.tag(3, 2);
      this.string(traceState);
    }
    if (parent?.spanId) {
      this.tag(4, 2);
      this.id(parent.spanId);
    }
    this.tag(5, 2);
    this.string(s.name);
    if (s.kind != null) {
      this.tag(6, 0);
      this.varint64(s.kind + 1);
    }
    this.tag(7, 1);
    this.hrTime(s.startTime);
    this.tag(8, 1);
    this.hrTime(s.endTime);
    this.attributes(s.attributes, 9);
    this.tag(10, 0);
    this.varint64(s.droppedAttributesCount);
    this.tag(12, 0);
    this.varint64(s.droppedEventsCount);
    this.tag(14, 0);
    this.varint64(s.droppedLinksCount);
    this.tag(15, 2);
    const status = this.begin(1);
    if (s.status.message) {
      this.tag(2, 2);
      this.string(s.status.message);
    }
    this.tag(3, 0);
    this.varint64(s.status.code);
    this.finish(status, 1);
    this.tag(16, 5);
    this.fixed32(spanFlags(context, parent?.isRemote));
  }

  resource(r: Resource): void {
    this.tag(1, 2);
    const body = this.begin(2);
    if (r.attributes) this.attributes(r.attributes, 1);
    this.tag(2, 0);
    this.varint64(0);
    this.finish(body, 2);
  }

  scope(sc: Scope): void {
    this.tag(1, 2);
    const body = this.begin(1);
    this.tag(1, 2);
    this.string(sc.name);
    if (sc.version) {
      this.tag(2, 2);
      this.string(sc.version);
    }
    const { attributes, droppedAttributesCount } = sc as Scope & { attributes?: Record<string, unknown>; droppedAttributesCount?: number };
    if (attributes) this.attributes(attributes, 3);
    if (droppedAttributesCount) {
      this.tag(4, 0);
      this.varint64(droppedAttributesCount);
    }
    this.finish(body, 1);
  }
}

const writer = new Writer();

/**
 * An ExportTraceServiceRequest: spans grouped by resource, then by instrumentation scope (by
 * identity, in order of appearance), as the SDK groups them. Throws `NotEncodable` for what it does not write.
 */
export function encodeTraceRequest(spans: ReadableSpan[]): Uint8Array {
  const byResource = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const s of spans) {
    let byScope = byResource.get(s.resource);
    if (!byScope) byResource.set(s.resource, (byScope = new Map()));
    let list = byScope.get(s.instrumentationScope);
    if (!list) byScope.set(s.instrumentationScope, (list = []));
    list.push(s);
  }
  const w = writer;
  w.pos = 0;
  for (const [r, byScope] of byResource) {
    w.tag(1, 2);
    const resourceSpans = w.begin(4);
    w.resource(r);
    for (const [sc, list] of byScope) {
      w.tag(2, 2);
      const scopeSpans = w.begin(4);
      w.scope(sc);
      for (const s of list) {
        w.tag(2, 2);
        const body = w.begin(2);
        w.span(s);
        w.finish(body, 2);
      }
      if (sc.schemaUrl) {
        w.tag(3, 2);
        w.string(sc.schemaUrl);
      }
      w.finish(scopeSpans, 4);
    }
    if (r.schemaUrl) {
      w.tag(3, 2);
      w.string(r.schemaUrl);
    }
    w.finish(resourceSpans, 4);
  }
  // A copy: the transport may still hold it while the next batch is written.
  return new Uint8Array(w.buf.subarray(0, w.pos));
}

/** The batch as OTLP protobuf bytes: this encoder's, or the SDK's for what it does not write. */
export function serializeSpans(spans: ReadableSpan[]): Uint8Array {
  try {
    return encodeTraceRequest(spans);
  } catch (err) {
    if (!(err instanceof NotEncodable)) throw err;
    return ProtobufTraceSerializer.serializeRequest(spans)!;
  }
}

/**
 * Builds the SDK's OTLP/HTTP protobuf exporter (its transport, OTEL_EXPORTER_OTLP_* settings and
 * retries) around an encoder: `(nodeHttp, exporterBase, transformer, serializeRequest) => exporter`,
 * given the three modules. Source text, as the worker thread runs it (it has no file of its own in
 * either bundle); the main thread evaluates the same text only when no worker can start.
 */
const SDK_EXPORTER_FACTORY = `(nodeHttp, exporterBase, transformer, serializeRequest) => new exporterBase.OTLPExporterBase(
  nodeHttp.createOtlpHttpExportDelegate(
    nodeHttp.convertLegacyHttpOptions({}, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
    { serializeRequest, deserializeResponse: transformer.ProtobufTraceSerializer.deserializeResponse },
    "otlp_http_span_exporter",
    transformer.TraceExporterMetricsHelper,
    undefined,
  ),
)`;
type SdkExporterFactory = (nodeHttp: unknown, exporterBase: unknown, transformer: unknown, serializeRequest: (batch: never) => Uint8Array) => SpanExporter;

/** The worker thread's program: the SDK's exporter over the batches the main thread encoded, one message per call. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const [nodeHttp, exporterBase, transformer] = workerData.modules.map((path) => require(path));
const exporter = (${SDK_EXPORTER_FACTORY})(nodeHttp, exporterBase, transformer, (bytes) => bytes);
const answer = (id) => (result) => parentPort.postMessage({ id, code: result.code, error: result.error ? String(result.error.message ?? result.error) : undefined });
parentPort.on("message", ({ id, kind, bytes }) => {
  if (kind === "export") return exporter.export(bytes, answer(id));
  const done = kind === "flush" ? exporter.forceFlush() : exporter.shutdown();
  done.then(() => answer(id)({ code: 0 }), (error) => answer(id)({ code: 1, error }));
});
parentPort.postMessage({ ready: true });
`;

/** ExportResultCode.FAILED (the enum lives in @opentelemetry/core, loaded with the SDK). */
const FAILED = 1 as ExportResult["code"];

/**
 * The exporter the SDK's batch processor calls: it encodes a batch here (the spans live in this
 * thread) and hands the bytes to a worker thread running the SDK's OTLP/HTTP exporter. Sending from
 * this thread made its HTTP client code share Node's http and stream internals with the server's
 * own requests: their optimized code met the client's objects, was thrown away (about 80 more
 * deoptimizations in 15 s of load) and came back slower for every request (docs/perf/2026-11-metrics-and-tracing-cost.md).
 * Idle, the worker keeps no process alive (startEvalWorker unref'd it); while a call waits for it (the
 * last batch at shutdown) it does.
 */
class WorkerSpanExporter implements SpanExporter {
  private nextId = 0;
  private readonly waiting = new Map<number, (result: ExportResult) => void>();
  private exited = false;

  constructor(private readonly worker: Worker) {
    worker.on("message", (message: { id: number; code: ExportResult["code"]; error?: string }) => {
      const callback = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) this.worker.unref();
      callback?.({ code: message.code, ...(message.error ? { error: new Error(message.error) } : {}) });
    });
    // A worker that died answers nothing more: what waits, and every later call, fails (the spans
    // are dropped, as the SDK drops them when its exporter fails).
    worker.once("exit", () => {
      this.exited = true;
      for (const callback of this.waiting.values()) callback({ code: FAILED, error: new Error("the trace export worker stopped") });
      this.waiting.clear();
    });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    let bytes: Uint8Array;
    try {
      bytes = serializeSpans(spans);
    } catch (error) {
      resultCallback({ code: FAILED, error: error as Error });
      return;
    }
    this.call("export", bytes).then(resultCallback);
  }

  forceFlush(): Promise<void> {
    return this.call("flush").then(() => {});
  }

  async shutdown(): Promise<void> {
    await this.call("shutdown");
    if (!this.exited) await this.worker.terminate();
  }

  private call(kind: "export" | "flush" | "shutdown", bytes?: Uint8Array): Promise<ExportResult> {
    if (this.exited) return Promise.resolve({ code: FAILED, error: new Error("the trace export worker stopped") });
    const id = this.nextId++;
    return new Promise((resolve) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, kind, bytes });
    });
  }
}

/** The worker's modules (as SDK_EXPORTER_FACTORY takes them), resolved from here: it runs outside either bundle. */
const EXPORTER_MODULES = ["@opentelemetry/otlp-exporter-base/node-http", "@opentelemetry/otlp-exporter-base", "@opentelemetry/otlp-transformer"];

/**
 * The OTLP/HTTP protobuf trace exporter: `serializeSpans` as its encoder, the SDK's transport,
 * settings and retries in a worker thread (WorkerSpanExporter). Where the worker cannot start (its
 * modules not found from here), the same exporter in this thread, with a warning.
 */
export async function otlpProtobufTraceExporter(): Promise<SpanExporter> {
  try {
    const resolve = createRequire(import.meta.url).resolve;
    return new WorkerSpanExporter(await startEvalWorker(WORKER_SOURCE, { modules: EXPORTER_MODULES.map((m) => resolve(m)) }));
  } catch (error) {
    log.warn("trace export: no worker thread, exporting from the main thread", { error });
    const [nodeHttp, exporterBase, transformer] = await Promise.all([
      import("@opentelemetry/otlp-exporter-base/node-http"),
      import("@opentelemetry/otlp-exporter-base"),
      import("@opentelemetry/otlp-transformer"),
    ]);
    const factory = new Function(`return ${SDK_EXPORTER_FACTORY}`)() as SdkExporterFactory;
    return factory(nodeHttp, exporterBase, transformer, serializeSpans as (batch: never) => Uint8Array);
  }
}
