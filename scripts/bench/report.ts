// Prints what `npm run bench` measured (the JSON goes to bench-results/ as well).

export type Throughput = {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  requests: number;
  /** CPU of the server's process tree per request: robust to other load on a shared machine. */
  cpuMsPerRequest: number;
  /** CPU of the PostgreSQL server per request (throwaway server only). */
  pgCpuMsPerRequest: number | null;
};

/** The bench's results, for a reader: ratios, medians and p99 per part, and the CPU profile summary. */
export function printResults(
  r: Record<string, any>,
  run: {
    rounds: number;
    connections: number;
    sequential: number;
    sliceS: number;
    listPath: string;
    deepRow: number;
    appointments: number;
    limiterSequential: number;
  },
) {
  const {
    rounds: ROUNDS,
    connections: CONNECTIONS,
    sequential: SEQUENTIAL,
    sliceS: SLICE_S,
    listPath: LIST_PATH,
    deepRow: DEEP_ROW,
    appointments: APPOINTMENTS,
    limiterSequential: LIMITER_SEQUENTIAL,
  } = run;
  const t = r.throughput as Record<string, Throughput> | undefined;
  const row = (label: string, x: Throughput) =>
    `| ${label.padEnd(66)} | ${String(x.reqPerSec).padStart(6)} | ${String(x.p50).padStart(4)} ms | ${String(x.p99).padStart(4)} ms | ${x.cpuMsPerRequest.toFixed(3).padStart(7)} | ${x.pgCpuMsPerRequest === null ? "    n/a" : x.pgCpuMsPerRequest.toFixed(3).padStart(7)} | ${String(x.non2xx + x.errors).padStart(4)} |`;
  if (t) {
    console.log(
      `\nGET ${LIST_PATH} on PostgreSQL, autocannon -c ${CONNECTIONS}, 127.0.0.1, ${r.machine.cpus} CPUs (${r.machine.cpu}), ` +
        `${ROUNDS} interleaved rounds of ${SLICE_S} s per row (req/s over all rounds; p50/p99: median over rounds).`,
    );
    console.log(`Full-stack rows: one API key, RATE_LIMIT_DISABLED=1 except (2r) (the limiter's latency is measured separately below).`);
    console.log(
      `CPU ms/req: CPU time of the server's process tree per request (and of PostgreSQL), read from /proc: unlike req/s it barely moves with other load on the machine.\n`,
    );
    console.log(`| ${"what answered".padEnd(66)} | req/s  | p50     | p99     | CPU/req | PG/req  | !2xx |`);
    console.log(`|${"-".repeat(68)}|--------|---------|---------|---------|---------|------|`);
    console.log(row("(1) physical limit: node:http + one raw pg query, no auth", t.physical));
    console.log(row("(2) full stack through the lean front (node:http -> REST bridge)", t.lean));
    if (t.next) console.log(row("(3) full stack through the Next route (next start)", t.next));
    console.log(row("(4) bare handler, same JSON from memory, lean front's node:http", t.bare));
    if (t.leanLimited) console.log(row("(2r) = (2) with the rate limiter on Redis", t.leanLimited));
    const q = r.ratios.reqPerSec;
    const c = r.ratios.cpuCapacity;
    console.log(`\nratios by req/s:          (2)/(1) = ${q.leanOverPhysical}   (2)/(3) = ${q.leanOverNext}   full stack/bare (2)/(4) = ${q.leanOverBare}`);
    console.log(`ratios by CPU per request: (2)/(1) = ${c.leanOverPhysical}   (2)/(3) = ${c.leanOverNext}   full stack/bare (2)/(4) = ${c.leanOverBare}`);
    console.log(`targets: (2)/(1) >= 0.33, (2)/(3) >= 5 (issue 7); full stack/bare >= 0.5 (issue 2)`);
    console.log(
      `same JSON from lean and Next: ${r.sameAnswer.leanVsNext}; from lean and the raw query: ${r.sameAnswer.leanVsPhysical} (${r.sameAnswer.bytes} bytes)`,
    );
  }
  const d = r.deepPage;
  if (d) {
    console.log(
      `\ndeep page (GET /api/v1/appointments?limit=20, cursor at row ${DEEP_ROW.toLocaleString("en")} of ${APPOINTMENTS.toLocaleString("en")}; ${SEQUENTIAL} sequential each, lean front):`,
    );
    console.log(
      `  page 1: median ${d.page1.median} ms, p99 ${d.page1.p99} ms   deep: median ${d.deep.median} ms, p99 ${d.deep.p99} ms   ratio: median ${d.medianRatio}x, p99 ${d.p99Ratio}x (target <= 1.3x)`,
    );
    console.log(
      `  page 2: median ${d.page2.median} ms, p99 ${d.page2.p99} ms   deep: median ${d.deepVsPage2.deep.median} ms, p99 ${d.deepVsPage2.deep.p99} ms   ratio: median ${d.deepVsPage2.medianRatio}x, p99 ${d.deepVsPage2.p99Ratio}x (same query shape: depth alone)`,
    );
  }
  const l = r.rateLimit;
  if (!l) {
    // not run (BENCH_PARTS)
  } else if (l.skipped) console.log(`\nrate limiter: skipped (${l.skipped})`);
  else {
    console.log(
      `\nrate limiter (sequential, ${LIMITER_SEQUENTIAL} each, interleaved, the same rotated keys on both): disabled median ${l.disabled.median} ms / p99 ${l.disabled.p99} ms; ` +
        `Redis median ${l.redis.median} ms / p99 ${l.redis.p99} ms; added ${l.addedMedianMs} ms per request (target < 0.3 ms)` +
        (l.non200 ? `; ${l.non200} non-200 answers` : ""),
    );
    const u = l.cpuUnderLoad;
    console.log(
      `  CPU per request under load (-c 10, 4 s after 2 s of warm-up): app ${u.disabled.appCpuMs} ms without, ${u.redis.appCpuMs} ms with the limiter (+${u.addedAppCpuMs} ms); redis-server ${u.redis.redisCpuMs ?? "n/a"} ms`,
    );
  }
  if (r.profile) {
    const p = r.profile;
    console.log(
      `\nCPU profile of (2), 5 s at -c ${CONNECTIONS}: ${p.requests} requests, ${p.busyMs} ms CPU on the main thread (${p.cpuMsPerRequest} ms/request)`,
    );
    console.log("  inclusive (share of busy samples with the component on the stack):");
    for (const c of p.byComponentInclusive.slice(0, 12)) console.log(`    ${String(c.pct).padStart(5)}%  ${c.component}`);
    console.log("  self time by component:");
    for (const c of p.byComponentSelf.slice(0, 12)) console.log(`    ${String(c.pct).padStart(5)}%  ${c.component}`);
    console.log("  top functions (self):");
    for (const f of p.topFunctions.slice(0, 10)) console.log(`    ${String(f.pct).padStart(5)}%  ${f.fn}`);
  }
  for (const name of ["analytics", "webhooks", "tools", "ingest"].filter((part) => r[part])) console.log(`\n${name}: ${JSON.stringify(r[name])}`);
  const m = r.metrics?.benchMetrics;
  if (m?.ratio) {
    const rounds = (x: { perRound?: { reqPerSec: number[] } }) => (x.perRound ? ` (per round: ${x.perRound.reqPerSec.join(", ")})` : "");
    console.log(
      `\nmetrics cost (GET ${LIST_PATH}, lean front, limiter on in memory; scraped every second; load average ${m.loadAverage?.start} -> ${m.loadAverage?.end}): ` +
        `on ${m.on.reqPerSec} req/s, off ${m.off.reqPerSec} req/s, on/off = ${m.ratio.reqPerSec}${rounds(m.ratio)} (${m.target}: ${m.met ? "met" : "NOT met"}); ` +
        `CPU per request off/on = ${m.ratio.cpuPerRequest}`,
    );
    if (m.tracedRatio) {
      console.log(
        `metrics + tracing (default sampler: TRACES_PER_SECOND new traces a second, exported over OTLP/HTTP): ${m.traced.reqPerSec} req/s, over off = ${m.tracedRatio.reqPerSec}${rounds(m.tracedRatio)}; ` +
          `CPU per request off ${m.off.cpuMsPerRequest} ms, traced ${m.traced.cpuMsPerRequest} ms, off/traced = ${m.tracedRatio.cpuPerRequest}; ` +
          `${m.traced.spansPerRequest} spans exported per request`,
      );
    }
    if (m.tracedEveryRequestRatio) {
      console.log(
        `metrics + tracing of every request (OTEL_TRACES_SAMPLER=parentbased_always_on): ${m.tracedEveryRequest.reqPerSec} req/s, over off = ${m.tracedEveryRequestRatio.reqPerSec}${rounds(m.tracedEveryRequestRatio)}; ` +
          `CPU per request ${m.tracedEveryRequest.cpuMsPerRequest} ms, off/traced = ${m.tracedEveryRequestRatio.cpuPerRequest}; ${m.tracedEveryRequest.spansPerRequest} spans exported per request`,
      );
    }
  }
}
