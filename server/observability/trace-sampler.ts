// The default head sampler when OTEL_TRACES_SAMPLER is unset: every request is traced until this
// process has begun TRACES_PER_SECOND new traces in the last second (a token bucket holding one
// second's worth), and requests beyond that are not (Datadog's tracers and AWS X-Ray's reservoir
// bound tracing the same way). A quiet service is traced in full, and a busy one pays for a bounded
// number of traces per second whatever its traffic (history: docs/perf/2026-11-metrics-and-tracing-cost.md). It decides only for new traces: wrapped
// in the SDK's ParentBasedSampler, a request continuing a caller's `traceparent` follows the
// caller's sampled flag, and a statement or webhook attempt follows its request.
// A request asks it before making any span (`admit`, server/observability/tracing.ts): one it leaves
// out makes none; one it admits begins its span in a context marked as admitted, so that the SDK's
// call of `shouldSample` for that span does not take a second token.
import { type Attributes, type Context, createContextKey, type SpanKind } from "@opentelemetry/api";
import type { Sampler, SamplingResult } from "@opentelemetry/sdk-trace-base";

// SamplingDecision's values (the SDK's enum, which this module does not load: tracing.ts imports the SDK lazily).
const NOT_RECORD = 0 as SamplingResult["decision"];
const RECORD_AND_SAMPLED = 2 as SamplingResult["decision"];

/** Set on the context a request's span begins in once `admit` took its token. */
export const ADMITTED_BY_HEAD_SAMPLER = createContextKey("tdp.trace_admitted");

export class TracesPerSecondSampler implements Sampler {
  private tokens: number;
  private last: number;

  /** `now` returns milliseconds (injectable so that a test steps the clock itself). */
  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  shouldSample(context: Context, _traceId: string, _name: string, _kind: SpanKind, _attributes: Attributes): SamplingResult {
    return { decision: context.getValue(ADMITTED_BY_HEAD_SAMPLER) === true || this.admit() ? RECORD_AND_SAMPLED : NOT_RECORD };
  }

  /** Whether a new trace may begin now (it takes a token). */
  admit(): boolean {
    const at = this.now();
    // Refilled continuously, up to one second's worth: a burst after a quiet spell is traced up to the rate, no more.
    this.tokens = Math.min(this.perSecond, this.tokens + ((at - this.last) / 1000) * this.perSecond);
    this.last = at;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  toString(): string {
    return `TracesPerSecondSampler{${this.perSecond}}`;
  }
}
