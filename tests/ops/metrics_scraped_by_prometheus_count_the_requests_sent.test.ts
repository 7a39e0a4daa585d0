// A real Prometheus server (Debian's, on 127.0.0.1, with ops/prometheus/alerts.yml loaded) scrapes
// a running lean front's metrics listener; the counters it stores are exactly the requests this test
// sent: the HTTP histogram by route template, method and status (probes not counted), rate-limit
// decisions per layer, tool calls, receiver answers, a webhook delivery and its attempt. The
// exposition passes `promtool check metrics` and carries no id, key or tenant; /metrics is not served
// on the tenants' port, and METRICS_TOKEN guards the listener when set.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Running } from "../../scripts/bench/services";
import { dashboardCaller, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { startConsumer } from "../helpers/webhook-consumer";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1"; // the subscription below targets this test's consumer on 127.0.0.1

const ALERTS = path.resolve(__dirname, "../../ops/prometheus/alerts.yml");
const TOKEN = "metrics-token-for-this-test-0123";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

type Sample = { metric: Record<string, string>; value: [number, string] };

describe("metrics scraped by Prometheus", () => {
  let server: Running;
  let consumer: Awaited<ReturnType<typeof startConsumer>>;
  let failing: Awaited<ReturnType<typeof startConsumer>>;
  let prometheus: ChildProcess | undefined;
  let promDir: string;
  let promUrl: string;
  let metricsUrl: string;
  let tenantId: string;
  let key: string;
  let exposition: string;

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey());
    consumer = await startConsumer(200);
    failing = await startConsumer(500);
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] as never });
    await dashboardCaller(tenantId).webhooks.createSubscription({ url: failing.url(), events: ["offering.created"] as never });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startMount("lean", {
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      WEBHOOK_ALLOW_LOOPBACK: "1",
      // A ladder without waits: the failing consumer's delivery is dead-lettered after its 6 attempts at once.
      WEBHOOK_RETRY_DELAYS_MS: "0,0,0,0,0,0",
      // and no breaker between them (it would hold the 6th attempt for a probe after the 5th failure).
      WEBHOOK_BREAKER_FAILURES: "1000",
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN: TOKEN,
    });
  }, 180_000);

  afterAll(async () => {
    prometheus?.kill("SIGTERM");
    await server?.stop();
    await consumer?.close();
    await failing?.close();
    if (promDir) rmSync(promDir, { recursive: true, force: true });
  });

  const scrape = (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => fetch(metricsUrl, { headers });

  async function send(method: string, p: string, opts: { auth?: string | null; body?: unknown } = {}): Promise<number> {
    const headers: Record<string, string> = {};
    if (opts.auth !== null) headers.authorization = `Bearer ${opts.auth ?? key}`;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(server.url + p, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    await res.arrayBuffer();
    return res.status;
  }

  it("the_listener_wants_the_token_and_the_tenants_port_serves_no_metrics", async () => {
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: "Bearer wrong-token-wrong-token" })).status).toBe(401);
    const ok = await scrape();
    expect([ok.status, ok.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    expect(await ok.text()).toContain("# TYPE tdp_http_request_duration_seconds histogram");
    const front = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(front.status).not.toBe(200);
    expect(await front.text()).not.toContain("tdp_");
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).toBe(404);
  });

  it("counts_match_the_requests_sent_as_prometheus_stores_them", async () => {
    promDir = mkdtempSync(path.join(tmpdir(), "tdp-prometheus-"));
    writeFileSync(path.join(promDir, "token"), TOKEN);
    writeFileSync(
      path.join(promDir, "prometheus.yml"),
      [
        "global: { scrape_interval: 1s, evaluation_interval: 1s }",
        `rule_files: ["${ALERTS}"]`,
        "scrape_configs:",
        "  - job_name: tdp",
        `    authorization: { type: Bearer, credentials_file: ${path.join(promDir, "token")} }`,
        `    static_configs: [{ targets: ["${new URL(metricsUrl).host}"] }]`,
      ].join("\n"),
    );
    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${path.join(promDir, "prometheus.yml")}`,
        `--storage.tsdb.path=${path.join(promDir, "data")}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        "--log.level=warn",
      ],
      { stdio: "ignore" },
    );
    const query = async (q: string): Promise<Sample[]> => {
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
      return ((await res.json()) as { data: { result: Sample[] } }).data.result;
    };
    // Scraping (twice at least) before any request is sent, with the rules loaded.
    for (const until = Date.now() + 60_000; ; ) {
      const scrapes = await query('count_over_time(up{job="tdp"}[1m])').catch(() => [] as Sample[]);
      if (Number(scrapes[0]?.value[1] ?? 0) >= 2) break;
      if (Date.now() > until) throw new Error("Prometheus did not scrape the metrics listener");
      await new Promise((r) => setTimeout(r, 250));
    }
    const statuses: [string, number][] = [];
    const record = async (name: string, status: Promise<number>) => statuses.push([name, await status]);
    for (let i = 0; i < 5; i++) await record("list", send("GET", "/api/v1/offerings?limit=1"));
    for (let i = 0; i < 2; i++) await record("one missing", send("PATCH", `/api/v1/offerings/${crypto.randomUUID()}`, { body: { title: "x" } }));
    for (let i = 0; i < 3; i++) await record("unknown key", send("GET", "/api/v1/offerings", { auth: `xapk_live_${"0".repeat(48)}` }));
    await record("create", send("POST", "/api/v1/offerings", { body: { title: "Metered", price: "1.00", price_currency: "USD" } }));
    await record("no such path", send("GET", "/api/v1/nothing-here"));
    for (let i = 0; i < 2; i++) await record("tool", send("POST", "/api/agent/v1/tools/search_offerings", { body: { query: "metered" } }));
    await record("tool, bad input", send("POST", "/api/agent/v1/tools/search_offerings", { body: { colour: "red" } }));
    await record("receiver, no body", send("POST", "/api/webhooks/twilio/messaging", { auth: null }));
    for (let i = 0; i < 3; i++)
      await record(
        "probes",
        Promise.all([send("GET", "/healthz"), send("GET", "/readyz")]).then(([a, b]) => a + b),
      );
    expect(statuses).toEqual([
      ...Array(5).fill(["list", 200]),
      ...Array(2).fill(["one missing", 404]),
      ...Array(3).fill(["unknown key", 401]),
      ["create", 201],
      ["no such path", 404],
      ...Array(2).fill(["tool", 200]),
      ["tool, bad input", 400],
      ["receiver, no body", 400],
      ...Array(3).fill(["probes", 400]),
    ]);
    // The create's event is delivered to one consumer and, after 6 failed attempts, dead-lettered at the other.
    await Promise.all([consumer.waitFor(1, 15_000), failing.waitFor(6, 15_000)]);
    for (const until = Date.now() + 15_000; Date.now() < until; ) {
      exposition = await (await scrape()).text();
      if (
        exposition.includes('tdp_webhook_deliveries_total{outcome="delivered"} 1') &&
        exposition.includes('tdp_webhook_deliveries_total{outcome="dead_letter"} 1')
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }

    // Every counter is final now: a scrape Prometheus began after this moment stored them all.
    const final = Date.now() / 1000;
    for (const until = Date.now() + 10_000; ; ) {
      const scraped = await query('timestamp(up{job="tdp"})').catch(() => [] as Sample[]);
      if (Number(scraped[0]?.value[1] ?? 0) > final) break;
      if (Date.now() > until) throw new Error("Prometheus did not scrape the metrics listener again");
      await new Promise((r) => setTimeout(r, 100));
    }
    const table = async (q: string, labels: string[]) =>
      Object.fromEntries((await query(q)).map((s) => [labels.map((l) => s.metric[l]).join(" "), Number(s.value[1])]));

    expect(await table('up{job="tdp"}', ["job"])).toEqual({ tdp: 1 });
    // The first test's GET /metrics on the tenants' port went to Next (a 404, or a 500 without a Next build).
    expect(await table('sum(tdp_http_request_duration_seconds_count{route="{next}"})', [])).toEqual({ "": 1 });
    expect(await table('sum by (route, method, status) (tdp_http_request_duration_seconds_count{route!="{next}"})', ["method", "route", "status"])).toEqual({
      // The start-up check of the test harness asked GET /api/v1 once.
      "GET /api/v1/{unmatched} 404": 2,
      "GET /api/v1/offerings 200": 5,
      "PATCH /api/v1/offerings/{id} 404": 2,
      "GET /api/v1/offerings 401": 3,
      "POST /api/v1/offerings 201": 1,
      "POST /api/agent/v1/tools/search_offerings 200": 2,
      "POST /api/agent/v1/tools/search_offerings 400": 1,
      "POST /api/webhooks/twilio/messaging 400": 1,
    });
    // A layer's `limited` series starts at 0 with its first decision, so the first refusal shows in increase().
    expect(await table("sum by (layer, outcome) (tdp_ratelimit_decisions_total)", ["layer", "outcome"])).toEqual({
      "key allowed": 11,
      "key limited": 0,
      "tenant allowed": 11,
      "tenant limited": 0,
      "tool allowed": 3,
      "tool limited": 0,
      "failed-auth-ip allowed": 3,
      "failed-auth-ip limited": 0,
      "ip allowed": 1,
      "ip limited": 0,
    });
    expect(await table("tdp_tool_calls_total", ["tool", "outcome"])).toEqual({ "search_offerings ok": 2, "search_offerings bad_request": 1 });
    expect(await table("tdp_receiver_messages_total", ["provider", "outcome"])).toEqual({ "twilio bad_request": 1 });
    expect(await table("tdp_webhook_attempts_total", ["outcome"])).toEqual({ delivered: 1, retry: 6, permanent_fail: 0 });
    expect(await table("tdp_webhook_deliveries_total", ["outcome"])).toEqual({ delivered: 1, dead_letter: 1, permanent_fail: 0 });
    expect(await table("tdp_webhook_attempt_duration_seconds_count", ["outcome"])).toEqual({ delivered: 1, retry: 6 });
    expect(await table("tdp_webhook_backlog_due", ["job"])).toEqual({ tdp: 0 });
    expect(await table("tdp_webhook_backlog_oldest_due_age_seconds", ["job"])).toEqual({ tdp: 0 });
    expect(await table("tdp_ready", ["job"])).toEqual({ tdp: 1 });
    expect(await table("count(process_cpu_seconds_total)", [])).toEqual({ "": 1 });
    // The real rules evaluate on the real series: the dead letter raises its alert, nothing else fires.
    let alerts: Sample[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until && !alerts.length; await new Promise((r) => setTimeout(r, 250))) alerts = await query("ALERTS");
    expect(alerts.map((a) => [a.metric.alertname, a.metric.alertstate, a.metric.severity])).toEqual([["TdpWebhookDeadLettersRising", "firing", "ticket"]]);
    const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string }[] }[] } };
    expect(rules.data.groups.flatMap((g) => g.rules.map((r) => `${r.name} ${r.health}`))).toEqual([
      "TdpTargetDown ok",
      "TdpReadinessFailing ok",
      "TdpHigh5xxRatio ok",
      "TdpWebhookBacklogOld ok",
      "TdpWebhookDeadLettersRising ok",
      "TdpRateLimitStoreFailing ok",
    ]);
  }, 150_000);

  it("the_exposition_passes_promtool_check_metrics_and_carries_no_id_key_or_tenant", () => {
    expect(exposition).toContain('tdp_webhook_deliveries_total{outcome="delivered"} 1');
    const checked = spawnSync("promtool", ["check", "metrics"], { input: exposition, encoding: "utf8" });
    expect({ status: checked.status, output: `${checked.stdout}${checked.stderr}` }).toEqual({ status: 0, output: "" });
    expect(exposition).not.toMatch(UUID);
    expect(exposition).not.toContain(tenantId);
    expect(exposition).not.toContain("xapk_");
    expect(exposition).not.toContain("127.0.0.1");
  });
});
