// The cost of Prometheus metrics and OpenTelemetry traces: the full stack (the compiled lean front,
// GET /api/v1/offerings on PostgreSQL, the in-memory rate limiter on with limits no run reaches, so
// its decisions are counted too) four ways: both off; METRICS_PORT set; METRICS_PORT and
// OTEL_EXPORTER_OTLP_ENDPOINT set with the default sampler (every request up to TRACES_PER_SECOND,
// 10 new traces a second, then none); and the same with every request traced
// (OTEL_TRACES_SAMPLER=parentbased_always_on: a server span and its statements' spans per request),
// each exporting to an OTLP/HTTP sink in this process. Each round starts a fresh server per
// configuration, warms each up, then measures them in turn in short slices (BENCH_METRICS_SUBSLICES
// of each, BENCH_METRICS_SLICE seconds per server in all), so that other load on the machine, which
// comes and goes within seconds, hits all alike; req/s and CPU per request are summed per round and
// the ratios are medians of per-round ratios. CPU per request (less sensitive to the rest of the
// machine than req/s) is reported beside req/s, with the load average at the start and end. Every
// metrics-on server is scraped once a second all round (Prometheus' default is every 15 s), so the
// scrape-time work (the backlog query, the readiness checks, rendering) is in the measure.
// Target: metrics on / off and metrics + tracing on (as configured by default) / off req/s >= 0.95
// (median per-round ratio); every request traced is reported beside it. Run alone: `BENCH_PARTS=metrics npm run bench`.
// BENCH_METRICS_COMPARE=<path to another build's dist/server/main.mjs> adds a fourth server, that
// build with metrics and tracing on, measured in the same rounds: an A/B of a change to the tracing
// cost (`comparedBuild` in the result, its ratios over this build's off).
// BENCH_METRICS_WARMUP=<seconds> (default 6) is the load each fresh server gets before its measured
// slices (a shorter one measures V8 still compiling: docs/perf/2026-11-metrics-and-tracing-cost.md),
// BENCH_METRICS_SLICE (default 6) their sum.
// BENCH_METRICS_TRACE_GC=1 runs every server under `node --trace-gc` and reports, per configuration,
// the scavenges and mark-compacts of the measured slices and their pauses per request (`gc`).
// BENCH_METRICS_PROFILE=<dir> runs the off and traced servers under `node --cpu-prof` (profiles into
// <dir>; the ratios of such a run are skewed by the profiler) and prints where each one's CPU went.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readdirSync, readFileSync } from "node:fs";
import { summariseProfile } from "./profile-summary";
import { otlpProtobufSpanCount } from "./protobuf";
import { freePort, processTreeCpuMs, spawnServer, type Running } from "./services";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (opts: Record<string, unknown>) => Promise<any>;

// More, shorter slices than the other parts: the ratios are medians over rounds, and a burst of
// other load then spoils one round rather than a third of the run.
const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? process.env.BENCH_ROUNDS ?? 7);
const SLICE_S = Number(process.env.BENCH_METRICS_SLICE ?? 6);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP_S = Number(process.env.BENCH_METRICS_WARMUP ?? 6);
/** Each server's measured seconds in a round are SLICE_S, taken as this many shorter slices in turn with the others'. */
const SUBSLICES = Number(process.env.BENCH_METRICS_SUBSLICES ?? 3);
const LIST_PATH = "/api/v1/offerings?limit=20";
const TARGET = 0.95;
const PROFILE_DIR = process.env.BENCH_METRICS_PROFILE;
const TRACE_GC = process.env.BENCH_METRICS_TRACE_GC === "1";
const COMPARE_BUILD = process.env.BENCH_METRICS_COMPARE;
const log = (msg: string) => console.error(`[bench:metrics] ${msg}`);
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

type Ctx = { databaseUrl: string; apiKey: string };
/** One server's slices summed (req/s, CPU per request) and their medians (latency: the median slice's p50 and p99). */
type Side = {
  reqPerSec: number;
  cpuMsPerRequest: number;
  latencyMs: { p50: number; p99: number };
  requests: number;
  non2xx: number;
  errors: number;
  scrapes: number;
  /** BENCH_METRICS_TRACE_GC: the slices' garbage collections (pauses on the main thread, µs per request). */
  gc?: { scavengesPer1000Requests: number; scavengePauseUsPerRequest: number; markCompacts: number; markCompactPauseUsPerRequest: number };
};
/**
 * A configuration over both off. `reqPerSec` and `cpuPerRequest` are the medians of the per-round
 * ratios (each round measures the three servers back to back, so a ratio compares slices that met
 * about the same load from the rest of the machine); `*Summed` are the ratios of the run's sums.
 * `cpuPerRequest` is off's CPU per request over this one's (above 1: cheaper than off).
 */
type Ratio = {
  reqPerSec: number;
  cpuPerRequest: number;
  reqPerSecSummed: number;
  cpuPerRequestSummed: number;
  perRound: { reqPerSec: number[]; cpuPerRequest: number[] };
};
type TracedSide = Side & { spansExported: number; spansPerRequest: number; exports: number; exportBytesPerSpan: number };
export type MetricsBenchResult = {
  on: Side;
  off: Side;
  /** Metrics and tracing on with the default sampler (TRACES_PER_SECOND new traces a second), exporting to a sink. */
  traced: TracedSide;
  /** Metrics and tracing on with every request sampled (`parentbased_always_on`), exporting to a sink. */
  tracedEveryRequest: TracedSide;
  ratio: Ratio;
  /** Metrics + tracing on (default sampler) over both off: the target's ratio. */
  tracedRatio: Ratio;
  /** Metrics + tracing of every request over both off. */
  tracedEveryRequestRatio: Ratio;
  /** Metrics + tracing on over metrics on: what tracing adds alone (`tracedRatio` compounds it with metrics' cost). */
  tracingOverMetricsRatio: Ratio;
  /** Seconds of load each fresh server had before its measured slice (BENCH_METRICS_WARMUP). */
  warmupSeconds: number;
  /** BENCH_METRICS_COMPARE: the other build, metrics and tracing on, and its ratios over this build's off. */
  comparedBuild?: Side & { build: string; ratio: Ratio };
  /** /proc/loadavg (1, 5 and 15 minutes) when the measured rounds began and ended: what else the machine was doing. */
  loadAverage: { start: string; end: string };
  target: string;
  met: boolean;
  exposition: { bytes: number; series: number };
};

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * An OTLP/HTTP trace sink: keeps each export's body and answers 200 at once; the spans are counted
 * after the run (`countSpans`), so decoding them takes no CPU from the load generator (this process)
 * while a server is measured.
 */
async function startOtlpSink() {
  const bodies: { protobuf: boolean; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push({ protobuf: req.headers["content-type"] === "application/x-protobuf", body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const needle = Buffer.from('"spanId"');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => bodies.length,
    bytes: () => bodies.reduce((n, b) => n + b.body.length, 0),
    countSpans(): number {
      let spans = 0;
      for (const { protobuf, body } of bodies) {
        if (protobuf) spans += otlpProtobufSpanCount(body);
        else for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) spans++;
      }
      return spans;
    },
    forget: () => void (bodies.length = 0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function benchMetrics(ctx: Ctx): Promise<MetricsBenchResult> {
  const env = {
    DATABASE_URL: ctx.databaseUrl,
    SKIP_MIGRATIONS: "1",
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
    NODE_ENV: "production",
    REDIS_URL: undefined,
    UPSTASH_REDIS_REST_URL: undefined,
    RATE_LIMIT_DISABLED: undefined,
    RATE_LIMIT_PER_KEY: "1000000000",
    RATE_LIMIT_PER_TENANT: "1000000000",
    WEBHOOK_ENGINE: "off",
  };
  const metricsPort = await freePort();
  const lean = [path.join(root, "dist/server/main.mjs")];
  const servers: Running[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const sink = await startOtlpSink();
  const sinkOfEveryRequest = await startOtlpSink();
  const exported = new Map<string, { spans: number; exports: number; bytes: number }>();
  try {
    const start = async (name: string, extra: Record<string, string>, build = lean) => {
      const dir = PROFILE_DIR && name !== "metrics on" ? path.join(PROFILE_DIR, name.replace(/\W+/g, "-")) : undefined;
      const argv = [...(dir ? ["--cpu-prof", "--cpu-prof-dir", dir] : []), ...(TRACE_GC ? ["--trace-gc"] : []), ...build];
      const s = await spawnServer(name, argv, { port: await freePort(), cwd: root, env: { ...env, ...extra } });
      servers.push(s);
      return s;
    };
    // The SDK's defaults but for the batch delay (1 s, so the export work falls inside each slice).
    const tracedEnv = async (sinkUrl: string, sampler: Record<string, string>) => {
      const port = await freePort();
      const env = {
        METRICS_PORT: String(port),
        OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
        OTEL_BSP_SCHEDULE_DELAY: "1000",
        ...sampler,
        ...(process.env.OTEL_EXPORTER_OTLP_PROTOCOL ? { OTEL_EXPORTER_OTLP_PROTOCOL: process.env.OTEL_EXPORTER_OTLP_PROTOCOL } : {}),
      };
      return { port, env };
    };
    // Each round starts its servers afresh: a process keeps its luck for its whole life (the core it
    // lands on, its neighbours, its JIT's choices), which skewed whole runs by more than the cost
    // measured here. A config is an environment; its process lives for one round.
    type Sink = Awaited<ReturnType<typeof startOtlpSink>>;
    type Config = { name: string; env: () => Promise<{ env: Record<string, string>; metricsUrl?: string }>; build?: string[]; sink?: Sink };
    const tracedConfig = (name: string, sink: Sink, build?: string[], sampler: Record<string, string> = {}): Config => ({
      name,
      build,
      sink,
      env: async () => {
        const setup = await tracedEnv(sink.url, sampler);
        return { env: setup.env, metricsUrl: `http://127.0.0.1:${setup.port}/metrics` };
      },
    });
    const offConfig: Config = { name: "metrics off", env: async () => ({ env: {} }) };
    const onConfig: Config = {
      name: "metrics on",
      env: async () => ({ env: { METRICS_PORT: String(metricsPort) }, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }),
    };
    const tracedConfigOfThis = tracedConfig("metrics + tracing on", sink);
    const everyRequestConfig = tracedConfig("metrics + tracing of every request", sinkOfEveryRequest, undefined, {
      OTEL_TRACES_SAMPLER: "parentbased_always_on",
    });
    // Its spans go to a sink of their own (not counted).
    const compareSink = COMPARE_BUILD ? await startOtlpSink() : undefined;
    if (compareSink) cleanups.push(compareSink.close);
    const comparedConfig = compareSink ? tracedConfig("compared build, metrics + tracing on", compareSink, [path.resolve(COMPARE_BUILD!)]) : undefined;
    const measured = [offConfig, onConfig, tracedConfigOfThis, everyRequestConfig, ...(comparedConfig ? [comparedConfig] : [])];
    const [off, on, traced, tracedAll, compared] = measured as [Config, Config, Config, Config, Config | undefined];
    const headers = { authorization: `Bearer ${ctx.apiKey}` };
    log(
      `${ROUNDS} rounds of ${SLICE_S} s per server in ${SUBSLICES} slices taken in turn (each round fresh processes, each warmed up ${WARMUP_S} s), -c ${CONNECTIONS}, scraping the metrics-on servers every second`,
    );
    type Slice = { requests: number; seconds: number; cpuMs: number; p50: number; p99: number; gc: GcTally };
    const acc = new Map<Config, { slices: Slice[]; non2xx: number; errors: number; scrapes: number }>(
      measured.map((s) => [s, { slices: [], non2xx: 0, errors: 0, scrapes: 0 }]),
    );
    let lastOnMetrics = "";
    const loadAtStart = loadAverage();
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which goes first, so none always follows another's leftover work.
      const order = measured.map((_, i) => measured[(i + round) % measured.length]!);
      // A fresh server per configuration, all alive through the round, each warmed up in turn.
      const live = new Map<Config, { s: Running; metricsUrl?: string }>();
      for (const config of order) {
        const { env: extra, metricsUrl } = await config.env();
        const s = await start(config.name, extra, config.build);
        live.set(config, { s, metricsUrl });
        await autocannon({ url: s.url + LIST_PATH, connections: CONNECTIONS, duration: WARMUP_S, headers }); // warm-up
      }
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the warm-ups' spans are exported
      for (const config of order) config.sink?.forget();
      // Prometheus scrapes every process whether or not it is busy: each metrics-on server once a second all round.
      let scraping = true;
      const scrapers = order.map(async (config) => {
        const { metricsUrl } = live.get(config)!;
        while (scraping && metricsUrl) {
          await new Promise((r) => setTimeout(r, 1000));
          if (!scraping) break;
          const res = await fetch(metricsUrl);
          await res.text();
          if (res.status === 200) acc.get(config)!.scrapes++;
        }
      });
      const gcs = new Map<Config, GcTally>(order.map((config) => [config, { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 }]));
      const partials = new Map<Config, string>(); // a line split across chunks
      const gcCounters = new Map(
        order.map((config) => [
          config,
          (chunk: Buffer) => {
            const text = (partials.get(config) ?? "") + String(chunk);
            const end = text.lastIndexOf("\n") + 1;
            partials.set(config, text.slice(end));
            tallyGc(text.slice(0, end), gcs.get(config)!);
          },
        ]),
      );
      // The measured time, SUBSLICES short slices per server taken in turn: load from the rest of the
      // machine, which comes and goes within seconds, then meets every server alike within a round.
      const parts = new Map<Config, { requests: number; seconds: number; cpuMs: number; p50: number[]; p99: number[] }>(
        order.map((config) => [config, { requests: 0, seconds: 0, cpuMs: 0, p50: [], p99: [] }]),
      );
      for (let sub = 0; sub < SUBSLICES; sub++) {
        for (const config of order) {
          const { s } = live.get(config)!;
          const part = parts.get(config)!;
          const countGc = gcCounters.get(config)!;
          if (TRACE_GC) s.proc.stdout!.on("data", countGc);
          const cpu0 = processTreeCpuMs(s.proc.pid!);
          const r = await autocannon({ url: s.url + LIST_PATH, connections: CONNECTIONS, duration: SLICE_S / SUBSLICES, headers });
          part.cpuMs += processTreeCpuMs(s.proc.pid!) - cpu0;
          s.proc.stdout!.off("data", countGc);
          part.requests += r.requests.total;
          part.seconds += r.duration;
          part.p50.push(r.latency.p50);
          part.p99.push(r.latency.p99);
          const a = acc.get(config)!;
          a.non2xx += r.non2xx;
          a.errors += r.errors + r.timeouts;
        }
      }
      scraping = false;
      await Promise.all(scrapers);
      const onLive = live.get(onConfig);
      if (onLive?.metricsUrl) lastOnMetrics = await (await fetch(onLive.metricsUrl)).text();
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the slices' last batches of spans are exported
      for (const config of order) {
        if (config.sink) {
          const e = exported.get(config.name) ?? { spans: 0, exports: 0, bytes: 0 };
          exported.set(config.name, {
            spans: e.spans + config.sink.countSpans(),
            exports: e.exports + config.sink.exports(),
            bytes: e.bytes + config.sink.bytes(),
          });
        }
        const { s } = live.get(config)!;
        await s.stop();
        servers.splice(servers.indexOf(s), 1);
        const part = parts.get(config)!;
        acc.get(config)!.slices.push({
          requests: part.requests,
          seconds: part.seconds,
          cpuMs: part.cpuMs,
          p50: median(part.p50),
          p99: median(part.p99),
          gc: gcs.get(config)!,
        });
      }
    }
    const loadAtEnd = loadAverage();
    const side = (s: Config): Side => {
      const a = acc.get(s)!;
      const sum = (f: (x: Slice) => number) => a.slices.reduce((n, x) => n + f(x), 0);
      const requests = sum((x) => x.requests);
      return {
        reqPerSec: Math.round(requests / sum((x) => x.seconds)),
        cpuMsPerRequest: round(sum((x) => x.cpuMs) / Math.max(requests, 1)),
        latencyMs: { p50: median(a.slices.map((x) => x.p50)), p99: median(a.slices.map((x) => x.p99)) },
        requests,
        non2xx: a.non2xx,
        errors: a.errors,
        scrapes: a.scrapes,
        ...(TRACE_GC
          ? {
              gc: {
                scavengesPer1000Requests: round((sum((x) => x.gc.scavenges) * 1000) / Math.max(requests, 1), 2),
                scavengePauseUsPerRequest: round((sum((x) => x.gc.scavengeMs) * 1000) / Math.max(requests, 1), 1),
                markCompacts: sum((x) => x.gc.markCompacts),
                markCompactPauseUsPerRequest: round((sum((x) => x.gc.markCompactMs) * 1000) / Math.max(requests, 1), 1),
              },
            }
          : {}),
      };
    };
    const ratioOf = (s: Config, base: Config): Ratio => {
      const [mine, theirs] = [acc.get(s)!.slices, acc.get(base)!.slices];
      const rps = (x: Slice) => x.requests / x.seconds;
      const cpu = (x: Slice) => x.cpuMs / Math.max(x.requests, 1);
      const reqPerSec = mine.map((x, i) => round(rps(x) / rps(theirs[i]!), 2));
      const cpuPerRequest = mine.map((x, i) => round(cpu(theirs[i]!) / cpu(x), 2));
      const [a, b] = [side(s), side(base)];
      return {
        reqPerSec: round(median(reqPerSec), 2),
        cpuPerRequest: round(median(cpuPerRequest), 2),
        reqPerSecSummed: round(a.reqPerSec / b.reqPerSec, 2),
        cpuPerRequestSummed: round(b.cpuMsPerRequest / a.cpuMsPerRequest, 2),
        perRound: { reqPerSec, cpuPerRequest },
      };
    };
    const text = lastOnMetrics;
    const tracedSideOf = (config: Config): TracedSide => {
      const s = side(config);
      const e = exported.get(config.name) ?? { spans: 0, exports: 0, bytes: 0 };
      return {
        ...s,
        spansExported: e.spans,
        spansPerRequest: round(e.spans / Math.max(s.requests, 1), 3),
        exports: e.exports,
        exportBytesPerSpan: Math.round(e.bytes / Math.max(e.spans, 1)),
      };
    };
    const ratio = ratioOf(on, off);
    const tracedRatio = ratioOf(traced, off);
    return {
      on: side(on),
      off: side(off),
      traced: tracedSideOf(traced),
      tracedEveryRequest: tracedSideOf(tracedAll),
      ratio,
      tracedRatio,
      tracedEveryRequestRatio: ratioOf(tracedAll, off),
      tracingOverMetricsRatio: ratioOf(traced, on),
      warmupSeconds: WARMUP_S,
      ...(compared ? { comparedBuild: { ...side(compared), build: path.resolve(COMPARE_BUILD!), ratio: ratioOf(compared, off) } } : {}),
      loadAverage: { start: loadAtStart, end: loadAtEnd },
      target: `metrics on/off and metrics+tracing on (default sampler)/off req/s >= ${TARGET} (median of the per-round ratios)`,
      met: ratio.reqPerSec >= TARGET && tracedRatio.reqPerSec >= TARGET,
      exposition: { bytes: text.length, series: text.split("\n").filter((l) => l && !l.startsWith("#")).length },
    };
  } finally {
    for (const s of servers) await s.stop();
    await Promise.all([sink.close(), sinkOfEveryRequest.close()]);
    for (const cleanup of cleanups) await cleanup();
    if (PROFILE_DIR) printProfiles(PROFILE_DIR);
  }
}

type GcTally = { scavenges: number; scavengeMs: number; markCompacts: number; markCompactMs: number };

/** Counts `--trace-gc` lines (`… Scavenge 108.0 (215.4) -> 69.0 (215.4) MB, pooled: 0 MB, 16.37 / 0.22 ms …`) into `into`. */
function tallyGc(text: string, into: GcTally): void {
  for (const line of text.split("\n")) {
    const pause = / ([\d.]+) \/ [\d.]+ ms/.exec(line);
    const ms = pause ? Number(pause[1]) : 0;
    if (line.includes(": Scavenge")) {
      into.scavenges++;
      into.scavengeMs += ms;
    } else if (line.includes(": Mark-Compact") || line.includes(": Mark-Sweep")) {
      into.markCompacts++;
      into.markCompactMs += ms;
    }
  }
}

/** Where the profiled servers' CPU went (the whole run, warm-up and start included). */
function printProfiles(dir: string): void {
  for (const name of readdirSync(dir)) {
    const file = readdirSync(path.join(dir, name)).find((f) => f.endsWith(".cpuprofile"));
    if (!file) continue;
    const p = summariseProfile(path.join(dir, name, file), 25);
    log(`profile ${name}: ${p.busyMs} ms busy (${path.join(dir, name, file)})`);
    for (const c of p.byComponentSelf) log(`  self ${String(c.pct).padStart(5)}%  ${c.component}`);
    for (const c of p.byComponentInclusive) log(`  incl ${String(c.pct).padStart(5)}%  ${c.component}`);
    for (const f of p.topFunctions) log(`  fn   ${String(f.pct).padStart(5)}%  ${f.fn}`);
  }
}
