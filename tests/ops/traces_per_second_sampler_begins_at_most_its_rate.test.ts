// The default head sampler (server/observability/trace-sampler.ts) on a clock the test steps: it
// samples up to its rate at once, then one more per 1/rate seconds, and never banks more than one
// second's worth however long the process was quiet.
import { ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { ADMITTED_BY_HEAD_SAMPLER, TracesPerSecondSampler } from "../../server/observability/trace-sampler";

const SAMPLED = 2;
const NOT_RECORDED = 0;

describe("TracesPerSecondSampler", () => {
  it("samples_its_rate_at_once_then_refills_continuously_up_to_one_seconds_worth", () => {
    let now = 1_000;
    const sampler = new TracesPerSecondSampler(4, () => now);
    const decide = () => sampler.shouldSample(ROOT_CONTEXT, "0".repeat(32), "GET /", SpanKind.SERVER, {}).decision;
    expect([decide(), decide(), decide(), decide(), decide()]).toEqual([SAMPLED, SAMPLED, SAMPLED, SAMPLED, NOT_RECORDED]);
    now += 249; // just short of a quarter second: not yet a token
    expect(decide()).toBe(NOT_RECORDED);
    now += 2; // the quarter second is complete
    expect([decide(), decide()]).toEqual([SAMPLED, NOT_RECORDED]);
    now += 60_000; // a quiet minute banks one second's worth, not sixty
    expect(Array.from({ length: 6 }, decide)).toEqual([SAMPLED, SAMPLED, SAMPLED, SAMPLED, NOT_RECORDED, NOT_RECORDED]);
  });

  it("a_span_begun_in_a_context_admitted_by_the_sampler_is_sampled_without_taking_a_second_token", () => {
    const sampler = new TracesPerSecondSampler(2, () => 0);
    expect(sampler.admit()).toBe(true); // a request asked first (server/observability/tracing.ts, traceRequest)
    const admitted = ROOT_CONTEXT.setValue(ADMITTED_BY_HEAD_SAMPLER, true);
    expect(sampler.shouldSample(admitted, "0".repeat(32), "GET /", SpanKind.SERVER, {}).decision).toBe(SAMPLED);
    // One token of the two is left: the span's own decision took none.
    expect(sampler.shouldSample(ROOT_CONTEXT, "0".repeat(32), "GET /", SpanKind.SERVER, {}).decision).toBe(SAMPLED);
    expect(sampler.admit()).toBe(false);
    expect(sampler.shouldSample(admitted, "0".repeat(32), "GET /", SpanKind.SERVER, {}).decision).toBe(SAMPLED);
  });

  it("a_rate_of_zero_samples_nothing", () => {
    const sampler = new TracesPerSecondSampler(0, () => 0);
    expect(sampler.shouldSample(ROOT_CONTEXT, "0".repeat(32), "GET /", SpanKind.SERVER, {}).decision).toBe(NOT_RECORDED);
  });
});
