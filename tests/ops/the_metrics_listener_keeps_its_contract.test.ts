// The metrics listener (server/http/metrics-listener.ts) serves what this process recorded, rendered by
// prom-client's registry, and keeps its contract: the token, 404 elsewhere, 405 for other methods, the
// exposition's content type, a rate-limit layer's two series begun at 0 by its first decision, and
// it closes its port when stopped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { startMetricsListener, stopMetricsListener } from "../../server/http/metrics-listener";
import { resetSettings } from "../../server/lib/settings";
import { countRateLimitDecisions, observeHttpRequest } from "../../server/observability/metrics";

const TOKEN = "metrics-token-for-the-listener-test";
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  process.env.METRICS_PORT = String(port);
  process.env.METRICS_TOKEN = TOKEN;
  resetSettings();
  await startMetricsListener();
});

afterAll(async () => {
  await stopMetricsListener();
  delete process.env.METRICS_PORT;
  delete process.env.METRICS_TOKEN;
  resetSettings();
});

describe("the metrics listener", () => {
  it("answers_scrapes_with_what_the_process_recorded_and_keeps_its_contract", async () => {
    observeHttpRequest("/api/v1/listener-test", "GET", 200, performance.now());
    observeHttpRequest("/api/v1/listener-test", "GET", 200, performance.now());
    countRateLimitDecisions([{ layer: { name: "key" } }], [{ success: true }]);
    const auth = { authorization: `Bearer ${TOKEN}` };

    const ok = await fetch(`${url}/metrics`, { headers: auth });
    expect([ok.status, ok.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    const text = await ok.text();
    expect(text).toContain('tdp_http_request_duration_seconds_count{route="/api/v1/listener-test",method="GET",status="200"} 2\n');
    expect(text).toContain('tdp_http_request_duration_seconds_bucket{le="10",route="/api/v1/listener-test",method="GET",status="200"} 2\n');
    // The layer's refusals series exists (at 0) from its first decision, so its first refusal shows in increase().
    expect(text).toContain('tdp_ratelimit_decisions_total{layer="key",outcome="allowed"} 1\ntdp_ratelimit_decisions_total{layer="key",outcome="limited"} 0\n');

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
  });

  it("closes_its_port_when_stopped", async () => {
    await stopMetricsListener();
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });
});
