// The default sampler decides before a request makes any span (server/observability/tracing.ts,
// traceRequest): a request it admits runs in a recording SERVER span; one it leaves out runs with no
// span and no trace context at all, as with tracing off, and the events it writes carry an unsampled
// `traceparent`, so that their webhook attempts are left out too rather than beginning traces of
// their own. In-process, with the SDK registered against a local OTLP sink, at TRACES_PER_SECOND=1.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let sink: Server;
let tracing: typeof import("../../server/observability/tracing");
let logScope: typeof import("../../server/lib/log");

beforeAll(async () => {
  sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  process.env.TRACES_PER_SECOND = "1";
  delete process.env.OTEL_TRACES_SAMPLER;
  tracing = await import("../../server/observability/tracing");
  logScope = await import("../../server/lib/log");
  await tracing.startTracing();
});

afterAll(async () => {
  await tracing?.stopTracing();
  await new Promise((resolve) => sink?.close(resolve));
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.TRACES_PER_SECOND;
});

/**
 * One request through traceRequest: what its work saw of the trace (its active span's ids and
 * whether it records, read while it runs, and the `traceparent` its events would carry).
 */
function request(requestId: string, headers: Record<string, string> = {}) {
  const req = { method: "GET", target: "/api/v1/offerings", headers: new Headers(headers) };
  return tracing.traceRequest(
    req,
    "/api/v1/{unmatched}",
    requestId,
    () =>
      logScope.withRequestScope(requestId, async () => ({
        recording: trace.getActiveSpan()?.isRecording(),
        ids: trace.getActiveSpan()?.spanContext(),
        traceParent: tracing.traceParentNow(),
        requestId: logScope.currentRequestId(),
      })),
    () => ({ status: 200, route: "/api/v1/offerings" }),
  );
}

/** Whether a webhook attempt of an event carrying `traceParent` (a CLIENT span continuing it) records. */
const recordingOf = (traceParent: string | null) =>
  tracing.traceClientCall("webhook attempt", {}, async () => trace.getActiveSpan()?.isRecording() ?? false, { parentTraceParent: traceParent });

describe("the default sampler at TRACES_PER_SECOND=1", () => {
  it("an_admitted_request_is_a_recording_span_and_one_left_out_has_no_span_and_an_unsampled_traceparent", async () => {
    const admitted = await request("admitted");
    const leftOut = await request("left-out"); // the second within the same second: no token left
    expect(admitted.recording).toBe(true);
    expect(admitted.traceParent).toBe(`00-${admitted.ids!.traceId}-${admitted.ids!.spanId}-01`);
    expect(leftOut.ids).toBeUndefined();
    expect(leftOut.requestId).toBe("left-out"); // its log scope is there all the same
    expect(leftOut.traceParent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);

    // Their events' attempts follow them: the admitted one's is recorded, the left-out one's is not,
    // though a second later the sampler has a token again for a trace of its own.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await recordingOf(leftOut.traceParent)).toBe(false);
    expect(await recordingOf(admitted.traceParent)).toBe(true);
    // Work outside any request (no stored traceparent) begins a trace when the sampler has a token.
    expect(await recordingOf(null)).toBe(true);
    expect(tracing.traceParentNow()).toBeNull();
  });

  it("a_caller_traceparent_is_followed_whatever_the_rate_sampled_or_not", async () => {
    const sampled = "0af7651916cd43dd8448eb211c80319c";
    const unsampled = "1af7651916cd43dd8448eb211c80319c";
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, (_, i) => request(`s${i}`, { traceparent: `00-${sampled}-b7ad6b7169203331-01` })),
      ...Array.from({ length: 3 }, (_, i) => request(`u${i}`, { traceparent: `00-${unsampled}-b7ad6b7169203331-00` })),
    ]);
    expect(answers.map((a) => [a.ids?.traceId, a.recording])).toEqual([
      [sampled, true],
      [sampled, true],
      [sampled, true],
      [unsampled, false],
      [unsampled, false],
      [unsampled, false],
    ]);
  });
});
