// The cost of Prometheus metrics: the full stack (the compiled lean front, GET /api/v1/offerings on
// PostgreSQL, the in-memory rate limiter on with limits no run reaches, so its decisions are
// counted too) with METRICS_PORT set over the same without, req/s and CPU per request measured in
// interleaved slices so that other load on the machine hits both alike. While the metrics-on server
// is under load it is also scraped once a second (Prometheus' default is every 15 s), so the
// scrape-time work (the backlog query, the readiness checks, rendering) is in the measure.
// Target: on/off req/s >= 0.95. Run alone: `BENCH_PARTS=metrics npm run bench`.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, processTreeCpuMs, spawnServer, type Running } from "./services";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (opts: Record<string, unknown>) => Promise<any>;

const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? process.env.BENCH_ROUNDS ?? 4);
const SLICE_S = Number(process.env.BENCH_SLICE ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LIST_PATH = "/api/v1/offerings?limit=20";
const TARGET = 0.95;
const log = (msg: string) => console.error(`[bench:metrics] ${msg}`);
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

type Ctx = { databaseUrl: string; apiKey: string };
type Side = { reqPerSec: number; cpuMsPerRequest: number; requests: number; non2xx: number; errors: number; scrapes: number };
export type MetricsBenchResult = {
  on: Side;
  off: Side;
  ratio: { reqPerSec: number; cpuPerRequest: number };
  target: string;
  met: boolean;
  exposition: { bytes: number; series: number };
};

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
  try {
    const start = async (name: string, extra: Record<string, string>) => {
      const s = await spawnServer(name, lean, { port: await freePort(), cwd: root, env: { ...env, ...extra } });
      servers.push(s);
      return s;
    };
    const [off, on] = [await start("metrics off", {}), await start("metrics on", { METRICS_PORT: String(metricsPort) })];
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const headers = { authorization: `Bearer ${ctx.apiKey}` };
    log(`${ROUNDS} interleaved rounds of ${SLICE_S} s per server, -c ${CONNECTIONS}, scraping the metrics-on server every second`);
    for (const s of [off, on]) await autocannon({ url: s.url + LIST_PATH, connections: CONNECTIONS, duration: 2, headers }); // warm-up
    const acc = new Map<Running, { requests: number; seconds: number; cpuMs: number; non2xx: number; errors: number; scrapes: number }>(
      [off, on].map((s) => [s, { requests: 0, seconds: 0, cpuMs: 0, non2xx: 0, errors: 0, scrapes: 0 }]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other's leftover work.
      for (const s of round % 2 ? [on, off] : [off, on]) {
        const a = acc.get(s)!;
        let scraping = s === on;
        const scraper = (async () => {
          while (scraping) {
            await new Promise((r) => setTimeout(r, 1000));
            if (!scraping) break;
            const res = await fetch(metricsUrl);
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
    const text = await (await fetch(metricsUrl)).text();
    const result = { on: side(on), off: side(off) };
    const ratio = {
      reqPerSec: round(result.on.reqPerSec / result.off.reqPerSec, 2),
      cpuPerRequest: round(result.off.cpuMsPerRequest / result.on.cpuMsPerRequest, 2),
    };
    return {
      ...result,
      ratio,
      target: `on/off req/s >= ${TARGET}`,
      met: ratio.reqPerSec >= TARGET,
      exposition: { bytes: text.length, series: text.split("\n").filter((l) => l && !l.startsWith("#")).length },
    };
  } finally {
    for (const s of servers) await s.stop();
  }
}
