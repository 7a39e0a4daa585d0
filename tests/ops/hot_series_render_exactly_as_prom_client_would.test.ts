// The per-request metrics keep plain numbers (server/observability/hot-series.ts) instead of
// prom-client's own classes, whose calls re-hash their labels each time. Scrapers must not see the
// difference: the same observations render to the same exposition text, line for line, as a
// prom-client Histogram or Counter of the same name would give, including values on a bucket's
// bound, past the last bound, and a series observed again after a reset.
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HotCounter, HotHistogram } from "../../server/observability/hot-series";

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const VALUES = [0, 0.0004, 0.001, 0.00100001, 0.0025, 0.007, 0.05, 0.3, 1, 4.9, 10, 10.5, 120];

describe("hot series", () => {
  it("a_histogram_renders_line_for_line_as_prom_clients", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const help = "Time to answer, by route, method and status";
    const hot = new HotHistogram<"route" | "method" | "status">("t_duration_seconds", help, BOUNDS, ours);
    const reference = new Histogram({
      name: "t_duration_seconds",
      help,
      labelNames: ["route", "method", "status"] as const,
      buckets: BOUNDS,
      registers: [theirs],
    });
    const a = hot.labels({ route: "/api/v1/offerings", method: "GET", status: "200" });
    const b = hot.labels({ route: '/api/v1/"quoted"\\path', method: "other", status: "404" });
    VALUES.forEach((v, i) => {
      a.observe(v);
      reference.labels("/api/v1/offerings", "GET", "200").observe(v);
      if (i % 3 === 0) {
        b.observe(v);
        reference.labels('/api/v1/"quoted"\\path', "other", "404").observe(v);
      }
    });
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('t_duration_seconds_bucket{le="0.001",route="/api/v1/offerings",method="GET",status="200"} 3\n');
    expect(text).toContain('t_duration_seconds_count{route="/api/v1/offerings",method="GET",status="200"} 13\n');
    // The same label values asked again are the same series, not a second one.
    hot.labels({ route: "/api/v1/offerings", method: "GET", status: "200" }).observe(0.002);
    reference.labels("/api/v1/offerings", "GET", "200").observe(0.002);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("a_counter_renders_line_for_line_as_prom_clients_and_a_reset_zeroes_kept_series", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const hot = new HotCounter<"layer" | "outcome">("t_decisions_total", "Decisions per layer", ours);
    const reference = new Counter({ name: "t_decisions_total", help: "Decisions per layer", labelNames: ["layer", "outcome"] as const, registers: [theirs] });
    const allowed = hot.labels({ layer: "key", outcome: "allowed" });
    const limited = hot.labels({ layer: "key", outcome: "limited" });
    for (let i = 0; i < 5; i++) allowed.inc();
    limited.inc(2);
    reference.labels("key", "allowed").inc(5);
    reference.labels("key", "limited").inc(2);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toBe(
      '# HELP t_decisions_total Decisions per layer\n# TYPE t_decisions_total counter\nt_decisions_total{layer="key",outcome="allowed"} 5\nt_decisions_total{layer="key",outcome="limited"} 2\n',
    );
    // Callers keep their series: a reset zeroes them in place, and they count on from 0.
    ours.resetMetrics();
    allowed.inc();
    expect(await ours.metrics()).toBe(
      '# HELP t_decisions_total Decisions per layer\n# TYPE t_decisions_total counter\nt_decisions_total{layer="key",outcome="allowed"} 1\nt_decisions_total{layer="key",outcome="limited"} 0\n',
    );
  });
});
