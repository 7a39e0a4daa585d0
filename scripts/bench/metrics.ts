// The cost of Prometheus metrics and OpenTelemetry traces: the full stack (the compiled lean front,
// GET /api/v1/offerings on PostgreSQL, the in-memory rate limiter on with limits no run reaches, so
// its decisions are counted too) three ways: both off; METRICS_PORT set; METRICS_PORT and
// OTEL_EXPORTER_OTLP_ENDPOINT set, every request traced (a server span and its statements' spans)
// and exported to an OTLP/HTTP sink in this process. req/s and CPU per request are measured in
// interleaved slices so that other load on the machine hits all alike. While a metrics-on server is
// under load it is also scraped once a second (Prometheus' default is every 15 s), so the scrape-time
// work (the backlog query, the readiness checks, rendering) is in the measure.
// Target: metrics on / off and metrics + tracing on / off req/s >= 0.95. Run alone: `BENCH_PARTS=metrics npm run bench`.
// BENCH_METRICS_PROFILE=<dir> runs the off and traced servers under `node --cpu-prof` (profiles into
// <dir>; the ratios of such a run are skewed by the profiler) and prints where each one's CPU went.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readdirSync } from "node:fs";
import { summariseProfile } from "./profile-summary";
import { freePort, processTreeCpuMs, spawnServer, type Running } from "./services";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (opts: Record<string, unknown>) => Promise<any>;

const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? process.env.BENCH_ROUNDS ?? 4);
const SLICE_S = Number(process.env.BENCH_SLICE ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LIST_PATH = "/api/v1/offerings?limit=20";
const TARGET = 0.95;
const PROFILE_DIR = process.env.BENCH_METRICS_PROFILE;
const log = (msg: string) => console.error(`[bench:metrics] ${msg}`);
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

type Ctx = { databaseUrl: string; apiKey: string };
type Side = { reqPerSec: number; cpuMsPerRequest: number; requests: number; non2xx: number; errors: number; scrapes: number };
export type MetricsBenchResult = {
  on: Side;
  off: Side;
  /** Metrics and tracing on (every request sampled), exporting to the sink. */
  traced: Side & { spansExported: number; spansPerRequest: number; exports: number };
  ratio: { reqPerSec: number; cpuPerRequest: number };
  /** Metrics + tracing on over both off. */
  tracedRatio: { reqPerSec: number; cpuPerRequest: number };
  target: string;
  met: boolean;
  exposition: { bytes: number; series: number };
};

/** The length-delimited fields `field` of a protobuf message (other fields skipped). */
function protobufChildren(buf: Buffer, field: number): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      const byte = buf[pos++]!;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else {
      const length = varint();
      if (Math.floor(tag / 8) === field) out.push(buf.subarray(pos, pos + length));
      pos += length;
    }
  }
  return out;
}
/** Spans in an OTLP ExportTraceServiceRequest: resource_spans (1) > scope_spans (2) > spans (2). */
const protobufSpanCount = (body: Buffer) =>
  protobufChildren(body, 1).reduce((n, rs) => n + protobufChildren(rs, 2).reduce((m, ss) => m + protobufChildren(ss, 2).length, 0), 0);

/** An OTLP/HTTP trace sink: reads each export, counts its spans (protobuf, or JSON without decoding it) and answers 200. */
async function startOtlpSink() {
  const counts = { exports: 0, spans: 0 };
  const needle = Buffer.from('"spanId"');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      counts.exports++;
      if (req.headers["content-type"] === "application/x-protobuf") counts.spans += protobufSpanCount(body);
      else for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) counts.spans++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
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
  const tracedMetricsPort = await freePort();
  const lean = [path.join(root, "dist/server/main.mjs")];
  const servers: Running[] = [];
  const sink = await startOtlpSink();
  try {
    const start = async (name: string, extra: Record<string, string>) => {
      const dir = PROFILE_DIR && name !== "metrics on" ? path.join(PROFILE_DIR, name.replace(/\W+/g, "-")) : undefined;
      const argv = dir ? ["--cpu-prof", "--cpu-prof-dir", dir, ...lean] : lean;
      const s = await spawnServer(name, argv, { port: await freePort(), cwd: root, env: { ...env, ...extra } });
      servers.push(s);
      return s;
    };
    const [off, on, traced] = [
      await start("metrics off", {}),
      await start("metrics on", { METRICS_PORT: String(metricsPort) }),
      // The SDK's defaults but for the batch delay (1 s, so the export work falls inside each slice).
      await start("metrics + tracing on", {
        METRICS_PORT: String(tracedMetricsPort),
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_BSP_SCHEDULE_DELAY: "1000",
        ...(process.env.OTEL_EXPORTER_OTLP_PROTOCOL ? { OTEL_EXPORTER_OTLP_PROTOCOL: process.env.OTEL_EXPORTER_OTLP_PROTOCOL } : {}),
      }),
    ];
    const metricsUrls = new Map([
      [on, `http://127.0.0.1:${metricsPort}/metrics`],
      [traced, `http://127.0.0.1:${tracedMetricsPort}/metrics`],
    ]);
    const headers = { authorization: `Bearer ${ctx.apiKey}` };
    log(`${ROUNDS} interleaved rounds of ${SLICE_S} s per server, -c ${CONNECTIONS}, scraping the metrics-on servers every second`);
    for (const s of [off, on, traced]) await autocannon({ url: s.url + LIST_PATH, connections: CONNECTIONS, duration: 2, headers }); // warm-up
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the warm-up's spans are exported
    const spansBefore = sink.counts.spans;
    const acc = new Map<Running, { requests: number; seconds: number; cpuMs: number; non2xx: number; errors: number; scrapes: number }>(
      [off, on, traced].map((s) => [s, { requests: 0, seconds: 0, cpuMs: 0, non2xx: 0, errors: 0, scrapes: 0 }]),
    );
    const orders = [
      [off, on, traced],
      [traced, off, on],
      [on, traced, off],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which goes first, so none always follows another's leftover work.
      for (const s of orders[round % orders.length]!) {
        const a = acc.get(s)!;
        const metricsUrl = metricsUrls.get(s);
        let scraping = metricsUrl !== undefined;
        const scraper = (async () => {
          while (scraping) {
            await new Promise((r) => setTimeout(r, 1000));
            if (!scraping) break;
            const res = await fetch(metricsUrl!);
            await res.text();
            if (res.status === 200) a.scrapes++;
          }
        })();
        const cpu0 = processTreeCpuMs(s.proc.pid!);
        const r = await autocannon({ url: s.url + LIST_PATH, connections: CONNECTIONS, duration: SLICE_S, headers });
        a.cpuMs += processTreeCpuMs(s.proc.pid!) - cpu0;
        scraping = false;
        await scraper;
        a.requests += r.requests.total;
        a.seconds += r.duration;
        a.non2xx += r.non2xx;
        a.errors += r.errors + r.timeouts;
      }
    }
    const side = (s: Running): Side => {
      const a = acc.get(s)!;
      return {
        reqPerSec: Math.round(a.requests / a.seconds),
        cpuMsPerRequest: round(a.cpuMs / Math.max(a.requests, 1)),
        requests: a.requests,
        non2xx: a.non2xx,
        errors: a.errors,
        scrapes: a.scrapes,
      };
    };
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the last batch of spans is exported
    const text = await (await fetch(metricsUrls.get(on)!)).text();
    const spansExported = sink.counts.spans - spansBefore;
    const result = { on: side(on), off: side(off) };
    const tracedSide = side(traced);
    const ratioOf = (a: Side, b: Side) => ({ reqPerSec: round(a.reqPerSec / b.reqPerSec, 2), cpuPerRequest: round(b.cpuMsPerRequest / a.cpuMsPerRequest, 2) });
    const ratio = ratioOf(result.on, result.off);
    const tracedRatio = ratioOf(tracedSide, result.off);
    return {
      ...result,
      traced: { ...tracedSide, spansExported, spansPerRequest: round(spansExported / Math.max(tracedSide.requests, 1), 2), exports: sink.counts.exports },
      ratio,
      tracedRatio,
      target: `metrics on/off and metrics+tracing on/off req/s >= ${TARGET}`,
      met: ratio.reqPerSec >= TARGET && tracedRatio.reqPerSec >= TARGET,
      exposition: { bytes: text.length, series: text.split("\n").filter((l) => l && !l.startsWith("#")).length },
    };
  } finally {
    for (const s of servers) await s.stop();
    await sink.close();
    if (PROFILE_DIR) printProfiles(PROFILE_DIR);
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
