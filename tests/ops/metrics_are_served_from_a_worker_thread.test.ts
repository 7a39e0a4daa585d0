// The metrics listener's HTTP server runs in a worker thread (server/http/metrics-listener.ts): a
// scrape is rendered by the server's thread, which holds the registry, but the server's thread
// handles no HTTP request of the listener's, which would share Node's http internals with the
// requests it serves (docs/perf/2026-11-metrics-and-tracing-cost.md). The listener keeps its contract: the token, 404
// elsewhere, 405 for other methods, the exposition's content type, and it closes with the process.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { startMetricsListener, stopMetricsListener } from "../../server/http/metrics-listener";
import { resetSettings } from "../../server/lib/settings";
import { observeHttpRequest } from "../../server/observability/metrics";

const TOKEN = "metrics-token-for-the-worker-test";
const requestsInThisThread: unknown[] = [];
const onServerRequest = (message: unknown) => requestsInThisThread.push(message);
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  process.env.METRICS_PORT = String(port);
  process.env.METRICS_TOKEN = TOKEN;
  resetSettings();
  subscribe("http.server.request.start", onServerRequest);
  await startMetricsListener();
});

afterAll(async () => {
  unsubscribe("http.server.request.start", onServerRequest);
  await stopMetricsListener();
  delete process.env.METRICS_PORT;
  delete process.env.METRICS_TOKEN;
  resetSettings();
});

describe("the metrics listener", () => {
  it("answers_scrapes_from_a_worker_thread_with_what_this_thread_recorded_and_keeps_its_contract", async () => {
    observeHttpRequest("/api/v1/worker-test", "GET", 200, performance.now());
    const auth = { authorization: `Bearer ${TOKEN}` };

    const ok = await fetch(`${url}/metrics`, { headers: auth });
    expect([ok.status, ok.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    expect(await ok.text()).toContain('tdp_http_request_duration_seconds_count{route="/api/v1/worker-test",method="GET",status="200"} 1');

    const head = await fetch(`${url}/metrics`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    const noToken = await fetch(`${url}/metrics`);
    expect([noToken.status, noToken.headers.get("www-authenticate"), await noToken.text()]).toEqual([
      401,
      'Bearer realm="metrics"',
      "a bearer token is required (METRICS_TOKEN)\n",
    ]);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer wrong-token-wrong-token" } })).status).toBe(401);
    const post = await fetch(`${url}/metrics`, { method: "POST", headers: auth });
    expect([post.status, post.headers.get("allow"), await post.text()]).toEqual([405, "GET, HEAD", "use GET\n"]);
    const elsewhere = await fetch(`${url}/other`, { headers: auth });
    expect([elsewhere.status, await elsewhere.text()]).toEqual([404, "not found: metrics are at /metrics\n"]);

    // Six requests answered, not one of them by an HTTP server of this thread.
    expect(requestsInThisThread).toEqual([]);
  });

  it("closes_its_port_when_stopped", async () => {
    await stopMetricsListener();
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });
});
