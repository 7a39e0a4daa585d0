// The metrics recorded on every served request (the HTTP duration histogram, the limiter's
// decisions), kept in plain numbers and rendered through prom-client's registry like its own
// metrics. prom-client's bound children (`histogram.labels(...).observe`, `counter.labels(...).inc`)
// check and hash their label values again on every call: under the bench's load that was about 3 µs
// of a request's 200 µs of CPU, most of what metrics cost a request (docs/perf/2026-11-metrics-and-tracing-cost.md).
// Here a series is looked up once by its caller and a call adds to its numbers.
//
// Both classes give the registry what it reads of a metric (`name`, `help`, `type`, `aggregator`,
// `get()`, `reset()`); the exposition lines are prom-client's own formatting of `get()`'s values.
import type { Metric, Registry } from "prom-client";

type Labels<L extends string> = Record<L, string>;
const seriesKey = (labels: Record<string, string>) => JSON.stringify(labels);

/**
 * What both kinds share: the registry's view of a metric, and one series per set of label values,
 * created by the first `labels()` call for it (callers keep their series, so the lookup is not on
 * the hot path).
 */
abstract class HotMetric<L extends string, S> {
  readonly aggregator = "sum" as const;
  protected readonly series = new Map<string, S & { labels: Labels<L> }>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  protected seriesOf(labels: Labels<L>, make: () => S): S {
    const key = seriesKey(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = Object.assign(make() as S & object, { labels })));
    return s;
  }
}

/** One series of a histogram (its buckets' counts are not cumulative until rendered; the last is +Inf). */
export type HistogramSeries = { observe(value: number): void };
type HistogramNumbers = HistogramSeries & { buckets: Float64Array; sum: number; count: number };

export class HotHistogram<L extends string> extends HotMetric<L, HistogramNumbers> {
  readonly type = "histogram" as const;

  constructor(
    name: string,
    help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, registry);
  }

  /** The series of these label values. */
  labels(labels: Labels<L>): HistogramSeries {
    return this.seriesOf(labels, () => {
      const bounds = this.upperBounds;
      const s: HistogramNumbers = {
        buckets: new Float64Array(bounds.length + 1),
        sum: 0,
        count: 0,
        observe(value: number) {
          let i = 0;
          while (i < bounds.length && value > bounds[i]!) i++;
          s.buckets[i]!++;
          s.sum += value;
          s.count++;
        },
      };
      return s;
    });
  }

  async get() {
    const values: { labels: Record<string, string | number>; sharedLabels?: Labels<L>; value: number; metricName: string }[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      // As prom-client lays a histogram out: `le` first, then the series' labels (shared by its lines).
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series (kept by callers, so kept here too). */
  reset(): void {
    for (const s of this.series.values()) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** A counter's series. */
export type CounterSeries = { inc(by?: number): void };
type CounterNumbers = CounterSeries & { value: number };

export class HotCounter<L extends string> extends HotMetric<L, CounterNumbers> {
  readonly type = "counter" as const;

  /** The series of these label values (at 0 until counted). */
  labels(labels: Labels<L>): CounterSeries {
    return this.seriesOf(labels, () => {
      const s: CounterNumbers = {
        value: 0,
        inc(by = 1) {
          s.value += by;
        },
      };
      return s;
    });
  }

  async get() {
    const values = [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series (kept by callers, so kept here too). */
  reset(): void {
    for (const s of this.series.values()) s.value = 0;
  }
}
