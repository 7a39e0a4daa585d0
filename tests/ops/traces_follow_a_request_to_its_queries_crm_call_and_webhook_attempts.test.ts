// OpenTelemetry traces over real HTTP: the lean front runs with OTEL_EXPORTER_OTLP_ENDPOINT pointing
// at an OTLP/HTTP receiver in this test (a node:http server on 127.0.0.1 decoding the protobuf the
// exporter sends by default, or JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). Requests on every surface make SERVER spans named by route template; their
// statements are child CLIENT spans; a CRM call is a child span; the webhook attempt of an event a
// request wrote is a span in that request's trace, under its span; a `traceparent` sent by the
// client is continued; log lines carry the span's trace id and, once authenticated, the tenant.
// With tracing off, nothing is exported and no line carries a trace id.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { protobufFields, protobufMessages } from "../../scripts/bench/protobuf";
import type { Running } from "../../scripts/bench/services";
import { dashboardCaller, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { connectCrm } from "../crm/connect";
import { startFakeCrm, type FakeCrm } from "../crm/fake-crm-server";

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: AnyValue }[];
  status?: { code?: number };
};
type Span = OtlpSpan & { attrs: Record<string, string | number | boolean | undefined>; service: string };
const SERVER = 2;
const CLIENT = 3;

const protoKeyValues = (buf: Buffer, field: number): OtlpSpan["attributes"] =>
  protobufMessages(buf, field).map((kv) => {
    let key = "";
    const value: AnyValue = {};
    for (const [n, v] of protobufFields(kv)) {
      if (n === 1) key = (v as Buffer).toString("utf8");
      if (n === 2)
        for (const [m, w] of protobufFields(v as Buffer)) {
          if (m === 1) value.stringValue = (w as Buffer).toString("utf8");
          else if (m === 2) value.boolValue = w === 1;
          else if (m === 3) value.intValue = w as number;
          else if (m === 4) value.doubleValue = w as number;
        }
    }
    return { key, value };
  });
/** An OTLP ExportTraceServiceRequest in protobuf, in the shape of its JSON encoding (ids in hex). */
function decodeOtlpProtobuf(buf: Buffer) {
  return {
    resourceSpans: protobufMessages(buf, 1).map((rs) => ({
      resource: { attributes: protobufMessages(rs, 1).flatMap((resource) => protoKeyValues(resource, 1)) },
      scopeSpans: protobufMessages(rs, 2).map((ss) => ({
        spans: protobufMessages(ss, 2).map((sp) => {
          const span: OtlpSpan = { traceId: "", spanId: "", name: "", kind: 0, attributes: protoKeyValues(sp, 9) };
          for (const [n, v] of protobufFields(sp)) {
            if (n === 1) span.traceId = (v as Buffer).toString("hex");
            else if (n === 2) span.spanId = (v as Buffer).toString("hex");
            else if (n === 4 && (v as Buffer).length) span.parentSpanId = (v as Buffer).toString("hex");
            else if (n === 5) span.name = (v as Buffer).toString("utf8");
            else if (n === 6) span.kind = v as number;
            else if (n === 15) span.status = { code: Number([...protobufFields(v as Buffer)].find(([m]) => m === 3)?.[1] ?? 0) };
          }
          return span;
        }),
      })),
    })),
  };
}

/** An OTLP/HTTP trace receiver: every span of every export (protobuf or JSON), and how many exports came. */
async function startOtlpReceiver(port = 0, host = "127.0.0.1") {
  const spans: Span[] = [];
  const exports: { path: string; contentType: string | undefined }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      exports.push({ path: req.url ?? "", contentType: req.headers["content-type"] });
      try {
        const raw = Buffer.concat(chunks);
        const body = (req.headers["content-type"] === "application/x-protobuf" ? decodeOtlpProtobuf(raw) : JSON.parse(raw.toString("utf8"))) as {
          resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const rs of body.resourceSpans ?? []) {
          const service = String(rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              const attrs = Object.fromEntries(
                span.attributes.map((a) => [
                  a.key,
                  a.value.stringValue ?? (a.value.intValue !== undefined ? Number(a.value.intValue) : (a.value.boolValue ?? a.value.doubleValue)),
                ]),
              );
              spans.push({ ...span, attrs, service });
            }
          }
        }
      } catch {
        /* undecodable: counted in exports, no spans */
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
  return {
    url: `http://${host === "::1" ? "[::1]" : host}:${(server.address() as AddressInfo).port}`,
    spans,
    exports,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

type Line = { msg: string; request_id?: string; trace_id?: string; span_id?: string; tenant_id?: string; [field: string]: unknown };
const logLines = (mount: Running): Line[] =>
  mount
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

describe("traces with OTEL_EXPORTER_OTLP_ENDPOINT set", () => {
  let receiver: Receiver;
  let mount: Running;
  let crm: FakeCrm;
  let consumer: Consumer;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    crm = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec-1" } });
    consumer = await startConsumer(200);
    ({ key, tenantId } = await tenantWithKey());
    await connectCrm(tenantId, { provider: "http", baseUrl: crm.url, mapping: { name: "firstname" } });
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] as never });
    mount = await startMount("lean", {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "tdp-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      LOG_LEVEL: "info",
      WEBHOOK_ALLOW_LOOPBACK: "1",
    });
  }, 180_000);
  afterAll(async () => {
    await mount?.stop();
    await Promise.all([receiver?.close(), crm?.close(), consumer?.close()]);
  });

  const serverSpan = (requestId: string) => eventually(async () => receiver.spans.find((s) => s.kind === SERVER && s.attrs["request.id"] === requestId));
  const childrenOf = (span: Span) => receiver.spans.filter((s) => s.traceId === span.traceId && s.parentSpanId === span.spanId);

  it("a_traceparent_is_continued_queries_are_children_and_the_webhook_attempt_joins_the_requests_trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const res = await fetch(`${mount.url}/api/v1/offerings`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "x-request-id": "trace-create-offering",
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: JSON.stringify({ title: "Traced studio", price: "10", price_currency: "AED" }),
    });
    expect(res.status).toBe(201);
    const offering = (await res.json()) as { id: string };

    const span = await serverSpan("trace-create-offering");
    expect(span).toMatchObject({ name: "POST /api/v1/offerings", traceId, parentSpanId: callerSpan, service: "tdp-under-test" });
    expect(span.attrs).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/api/v1/offerings",
      "http.response.status_code": 201,
      "url.path": "/api/v1/offerings",
      "tenant.id": tenantId,
    });
    // The key lookup and the write are statements under the request's span.
    const queries = await eventually(async () => {
      const found = childrenOf(span).filter((s) => s.kind === CLIENT && s.attrs["db.system.name"] === "postgresql");
      return found.length >= 2 && found;
    });
    expect(queries.every((q) => typeof q.attrs["db.operation.name"] === "string")).toBe(true);
    // SQL statements are named by their summary (operation and first table), Prisma calls by
    // operation and model; the SQL text is attached only to a failed statement.
    const statements = queries.filter((q) => q.attrs["db.query.summary"] !== undefined);
    expect(statements.map((q) => q.name)).toContain("SELECT api_keys");
    expect(statements.filter((q) => q.attrs["db.query.summary"] !== q.name)).toEqual([]);
    expect(queries.filter((q) => q.attrs["db.query.summary"] === undefined && typeof q.attrs["db.collection.name"] !== "string")).toEqual([]);
    expect(queries.filter((q) => q.attrs["db.query.text"] !== undefined)).toEqual([]);

    // The event's delivery is attempted later, by the worker: its span is in the request's trace, under the request's span.
    await consumer.waitFor(1);
    const attempt = await eventually(async () => receiver.spans.find((s) => s.name === "webhook attempt" && s.traceId === traceId));
    expect(attempt).toMatchObject({ kind: CLIENT, parentSpanId: span.spanId });
    expect(attempt.attrs).toMatchObject({
      "webhook.event_type": "offering.created",
      "http.response.status_code": 200,
      "webhook.outcome": "delivered",
      "tenant.id": tenantId,
    });
    expect(attempt.attrs["webhook.event_id"]).toBe(consumer.received[0]!.headers["webhook-id"]);
    expect(attempt.attrs["webhook.delivery_id"]).toMatch(/^[0-9a-f-]{36}$/);
    // Recording the attempt is a statement under the attempt's span.
    await eventually(async () => childrenOf(attempt).some((s) => s.attrs["db.system.name"] === "postgresql"));

    // A read by id: named by its template, never by the raw id.
    await fetch(`${mount.url}/api/v1/offerings/${offering.id}`, { headers: { authorization: `Bearer ${key}`, "x-request-id": "trace-get-offering" } });
    const read = await serverSpan("trace-get-offering");
    expect(read.name).toBe("GET /api/v1/offerings/{id}");
    expect(read.attrs["url.path"]).toBe(`/api/v1/offerings/${offering.id}`);
    expect(read.parentSpanId ?? "").toBe(""); // no traceparent sent: a trace of its own
    expect(read.traceId).not.toBe(traceId);
  });

  it("a_crm_call_is_a_client_span_under_the_request", async () => {
    const res = await fetch(`${mount.url}/api/v1/crm/create-record`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": "trace-crm" },
      body: JSON.stringify({ object: "contacts", fields: { name: "Sara" } }),
    });
    expect(res.status).toBe(201);
    const span = await serverSpan("trace-crm");
    expect(span.name).toBe("POST /api/v1/crm/create-record");
    const call = await eventually(async () => childrenOf(span).find((s) => s.name === "crm create_record"));
    expect(call).toMatchObject({ kind: CLIENT });
    expect(call.attrs).toMatchObject({ "crm.provider": "http", "crm.object": "contacts" });
  });

  it("every_surface_makes_a_server_span_named_by_its_route_template", async () => {
    const surfaces: { path: string; init?: RequestInit; name: string; status: number }[] = [
      { path: "/api/agent/v1/tools", init: { headers: { authorization: `Bearer ${key}` } }, name: "GET /api/agent/v1/tools", status: 200 },
      {
        path: "/api/agent/mcp",
        init: {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        },
        name: "POST /api/agent/mcp",
        status: 200,
      },
      {
        path: "/api/webhooks/twilio/messaging",
        init: { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "Body=hi" },
        name: "POST /api/webhooks/twilio/messaging",
        status: 401,
      },
      { path: "/api/webhooks/whatsapp/1234567890", init: { method: "POST", body: "{}" }, name: "POST /api/webhooks/whatsapp/{id}", status: 401 },
      { path: "/api/auth/get-session", name: "GET /api/auth/{action}", status: 200 },
      { path: "/api/trpc/dashboard.members.list", name: "GET /api/trpc/dashboard.members.list", status: 401 },
      { path: "/api/trpc/no.such.procedure", name: "GET /api/trpc/{procedure}", status: 404 },
    ];
    for (const s of surfaces) {
      const res = await fetch(mount.url + s.path, s.init);
      await res.text();
      const requestId = res.headers.get("x-request-id")!;
      const span = await serverSpan(requestId);
      expect({ path: s.path, status: res.status, name: span.name, code: span.attrs["http.response.status_code"] }).toEqual({
        path: s.path,
        status: s.status,
        name: s.name,
        code: s.status,
      });
    }
  });

  it("log_lines_carry_the_trace_id_and_once_authenticated_the_tenant", async () => {
    // An unknown key logs its refusal (no tenant yet); an upstream CRM failure logs with the tenant.
    crm.respond({ kind: "json", status: 500, body: { error: "boom" } });
    const res = await fetch(`${mount.url}/api/v1/crm/create-record`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": "trace-logged-failure" },
      body: JSON.stringify({ object: "contacts", fields: { name: "Omar" } }),
    });
    expect(res.status).toBe(500);
    const span = await serverSpan("trace-logged-failure");
    expect(span.status?.code).toBe(2); // ERROR
    const line = await eventually(async () => logLines(mount).find((l) => l.request_id === "trace-logged-failure" && l.msg === "crm provider failed"));
    expect(line).toMatchObject({ trace_id: span.traceId, tenant_id: tenantId });
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);

    const refused = await fetch(`${mount.url}/api/v1/offerings`, { headers: { authorization: "Bearer tdp_not_a_key", "x-request-id": "trace-refused" } });
    expect(refused.status).toBe(401);
    const refusedSpan = await serverSpan("trace-refused");
    const refusal = await eventually(async () => logLines(mount).find((l) => l.request_id === "trace-refused"));
    expect(refusal.trace_id).toBe(refusedSpan.traceId);
    expect(refusal.tenant_id).toBeUndefined();
    // The exporter spoke OTLP/HTTP protobuf (the default encoding) to the traces path.
    expect(receiver.exports[0]).toEqual({ path: "/v1/traces", contentType: "application/x-protobuf" });
  });
});

/**
 * A describe block's lean front exporting to a receiver of its own, with a tenant's key, started
 * before its tests and stopped after them (`env` beside OTEL_EXPORTER_OTLP_ENDPOINT and a 100-ms batch delay).
 */
function tracedMountPerBlock(env: Record<string, string>) {
  const the = {} as { receiver: Receiver; mount: Running; key: string };
  beforeAll(async () => {
    the.receiver = await startOtlpReceiver();
    ({ key: the.key } = await tenantWithKey());
    the.mount = await startMount("lean", { OTEL_EXPORTER_OTLP_ENDPOINT: the.receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100", ...env });
  }, 180_000);
  afterAll(async () => {
    await the.mount?.stop();
    await the.receiver?.close();
  });
  return the;
}

describe("traces with OTEL_EXPORTER_OTLP_PROTOCOL=http/json", () => {
  const the = tracedMountPerBlock({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "tdp-json" });

  it("the_same_spans_arrive_as_otlp_json", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const callerSpan = "b7ad6b7169203331";
    const res = await fetch(`${the.mount.url}/api/v1/offerings?limit=1`, {
      headers: { authorization: `Bearer ${the.key}`, "x-request-id": "trace-json", traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(res.status).toBe(200);
    const span = await eventually(async () => the.receiver.spans.find((s) => s.kind === SERVER && s.attrs["request.id"] === "trace-json"));
    expect(span).toMatchObject({ name: "GET /api/v1/offerings", traceId, parentSpanId: callerSpan, service: "tdp-json" });
    const queries = await eventually(async () => {
      const found = the.receiver.spans.filter((s) => s.traceId === traceId && s.parentSpanId === span.spanId && s.kind === CLIENT);
      return found.length ? found : undefined;
    });
    expect(queries.every((q) => q.attrs["db.system.name"] === "postgresql")).toBe(true);
    expect(the.receiver.exports[0]).toEqual({ path: "/v1/traces", contentType: "application/json" });
  });
});

describe("traces with the default sampler (OTEL_TRACES_SAMPLER unset) at TRACES_PER_SECOND=1", () => {
  const the = tracedMountPerBlock({ TRACES_PER_SECOND: "1" });

  const get = (requestId: string, traceparent?: string) =>
    fetch(`${the.mount.url}/api/v1/offerings?limit=1`, {
      headers: { authorization: `Bearer ${the.key}`, "x-request-id": requestId, ...(traceparent ? { traceparent } : {}) },
    }).then(async (res) => {
      await res.text();
      return res.status;
    });

  it("a_burst_beyond_the_rate_begins_no_more_traces_than_the_rate_allows_and_leaves_no_orphan_spans", async () => {
    // The start-up probe (a request to /api/v1) took the token: a quiet second fills the bucket again.
    await new Promise((r) => setTimeout(r, 1100));
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => get(`burst-${i}`)));
    const elapsedS = (performance.now() - started) / 1000;
    expect(statuses).toEqual(Array(12).fill(200));
    // A sentinel continuing a sampled trace is always exported: once it is in, the burst's spans are too.
    await get("burst-sentinel", "00-11111111111111111111111111111111-2222222222222222-01");
    // (The batch processor exports in the order spans end, one batch after another.)
    await eventually(async () => the.receiver.spans.some((s) => s.attrs["request.id"] === "burst-sentinel"));
    const traced = the.receiver.spans.filter((s) => s.kind === SERVER && String(s.attrs["request.id"]).match(/^burst-\d+$/));
    // One token at the start, one more per second the burst lasted.
    expect(traced.length).toBeGreaterThanOrEqual(1);
    expect(traced.length).toBeLessThanOrEqual(1 + Math.floor(elapsedS));
    // The untraced requests' statements made no spans: every client span has its parent in the export.
    const ids = new Set(the.receiver.spans.map((s) => s.spanId));
    expect(the.receiver.spans.filter((s) => s.kind === CLIENT && !ids.has(s.parentSpanId ?? ""))).toEqual([]);
  });

  it("a_request_continuing_a_sampled_traceparent_is_traced_beyond_the_rate_and_an_unsampled_one_is_not", async () => {
    const sampled = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const unsampled = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const statuses = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => get(`sampled-${i}`, `00-${sampled}-00f067aa0ba902b7-01`)),
      ...Array.from({ length: 6 }, (_, i) => get(`unsampled-${i}`, `00-${unsampled}-00f067aa0ba902b7-00`)),
    ]);
    expect(statuses).toEqual(Array(12).fill(200));
    const spans = await eventually(async () => {
      const found = the.receiver.spans.filter((s) => s.kind === SERVER && s.traceId === sampled);
      return found.length === 6 && found;
    });
    expect(spans.map((s) => s.attrs["request.id"]).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `sampled-${i}`));
    // A sentinel sent after every answer: once it is in, an unsampled request's spans (ended before it began) would be too.
    await get("unsampled-sentinel", "00-11111111111111111111111111111111-2222222222222222-01");
    await eventually(async () => the.receiver.spans.some((s) => s.attrs["request.id"] === "unsampled-sentinel"));
    expect(the.receiver.spans.filter((s) => s.traceId === unsampled)).toEqual([]);
  });
});

describe("traces at SIGTERM", () => {
  // A minute's batch delay: nothing is exported before the process is told to stop.
  const the = tracedMountPerBlock({ OTEL_BSP_SCHEDULE_DELAY: "60000" });

  it("the_spans_still_batched_are_exported_before_the_process_exits", async () => {
    const res = await fetch(`${the.mount.url}/api/v1/offerings?limit=1`, { headers: { authorization: `Bearer ${the.key}`, "x-request-id": "last-batch" } });
    expect(res.status).toBe(200);
    await res.text();
    await new Promise((r) => setTimeout(r, 300));
    expect(the.receiver.spans.filter((s) => s.attrs["request.id"] === "last-batch")).toEqual([]);
    await the.mount.stop();
    expect(the.mount.proc.exitCode).toBe(0);
    // The batch went out from the export worker, which the exit waited for.
    expect(the.receiver.spans.filter((s) => s.kind === SERVER && s.attrs["request.id"] === "last-batch").map((s) => s.name)).toEqual(["GET /api/v1/offerings"]);
  });
});

describe("traces with OTEL_EXPORTER_OTLP_ENDPOINT unset", () => {
  // The SDK's default endpoint is localhost:4318: a receiver there would see any export a process
  // made with tracing wrongly on. (When the port is taken, the log lines alone are checked.)
  let receivers: Receiver[] = [];
  let mount: Running;
  let key: string;

  beforeAll(async () => {
    receivers = (await Promise.allSettled([startOtlpReceiver(4318, "127.0.0.1"), startOtlpReceiver(4318, "::1")]))
      .filter((r): r is PromiseFulfilledResult<Receiver> => r.status === "fulfilled")
      .map((r) => r.value);
    ({ key } = await tenantWithKey());
    mount = await startMount("lean", { OTEL_SERVICE_NAME: "tdp-off", OTEL_BSP_SCHEDULE_DELAY: "100", LOG_LEVEL: "info" });
  }, 180_000);
  afterAll(async () => {
    await mount?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it("nothing_is_exported_and_no_line_carries_a_trace_id", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${mount.url}/api/v1/offerings`, {
        headers: { authorization: `Bearer ${key}`, "x-request-id": `untraced-${i}`, traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` },
      });
      expect(res.status).toBe(200);
    }
    await fetch(`${mount.url}/api/v1/offerings`, { headers: { authorization: "Bearer tdp_not_a_key", "x-request-id": "untraced-refused" } });
    // No export to wait for with tracing off: once the last request is logged, three batch delays
    // (100 ms) are room for the export a provider set up by mistake would make.
    await eventually(async () => logLines(mount).some((l) => l.request_id === "untraced-refused"), 5_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const r of receivers) expect(r.exports).toEqual([]);
    const lines = logLines(mount);
    expect(lines.filter((l) => "trace_id" in l || "span_id" in l)).toEqual([]);
  });
});
