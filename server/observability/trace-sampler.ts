// The default head sampler when OTEL_TRACES_SAMPLER is unset: every request is traced until this
// process has begun TRACES_PER_SECOND new traces in the last second (a token bucket holding one
// second's worth), and requests beyond that are not (Datadog's tracers and AWS X-Ray's reservoir
// bound tracing the same way). A quiet service is traced in full, and a busy one pays for a bounded
// number of traces per second whatever its traffic: tracing every request of the offerings list
// cost 15 to 30% of its req/s (docs/operations.md, "Cost"). It decides only for new traces: wrapped
// in the SDK's ParentBasedSampler, a request continuing a caller's `traceparent` follows the
// caller's sampled flag, and a statement or webhook attempt follows its request.
import type { Attributes, Context, SpanKind } from "@opentelemetry/api";
import type { Sampler, SamplingResult } from "@opentelemetry/sdk-trace-base";

// SamplingDecision's values (the SDK's enum, which this module does not load: tracing.ts imports the SDK lazily).
const NOT_RECORD = 0 as SamplingResult["decision"];
const RECORD_AND_SAMPLED = 2 as SamplingResult["decision"];

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

  shouldSample(_context: Context, _traceId: string, _name: string, _kind: SpanKind, _attributes: Attributes): SamplingResult {
    const at = this.now();
    // Refilled continuously, up to one second's worth: a burst after a quiet spell is traced up to the rate, no more.
    this.tokens = Math.min(this.perSecond, this.tokens + ((at - this.last) / 1000) * this.perSecond);
    this.last = at;
    if (this.tokens < 1) return { decision: NOT_RECORD };
    this.tokens -= 1;
    return { decision: RECORD_AND_SAMPLED };
  }

  toString(): string {
    return `TracesPerSecondSampler{${this.perSecond}}`;
  }
}
