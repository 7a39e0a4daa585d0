// Under `next start` (the app-router route files on Next's own HTTP server, not the lean front):
// API requests land in the HTTP request-duration histogram by route template, as on the lean front;
// and SIGTERM drains as there: /readyz answers 503 from the signal on while the process serves on
// for SHUTDOWN_DELAY_MS, a request in flight across the shutdown gets its answer, then Next closes
// its server and the process exits. Needs a production build (`next build`); skipped without one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { exitOf, splitBodyRequest, waitUntilRefused } from "../helpers/http-client";
import { requireNextBuild, startMount } from "../helpers/http-mounts";

requireNextBuild();

const DELAY_MS = 3_000;
const DRAINING = { status: "not_ready", failing: ["shutdown"], checks: { shutdown: "draining" } };

describe("next start", () => {
  let server: Running;
  let metricsUrl: string;
  let auth: Record<string, string>;
  beforeAll(async () => {
    const { key } = await tenantWithKey();
    auth = { authorization: `Bearer ${key}` };
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startMount("next", {
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      METRICS_PORT: String(metricsPort),
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: "20000",
    });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("api_requests_are_counted_in_the_duration_histogram_by_route_template_never_by_raw_path", async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api/v1/offerings?limit=1`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/offerings/00000000-0000-4000-8000-000000000000`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${server.url}/api/trpc/no.such.procedure`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const counts = (await (await fetch(metricsUrl)).text()).split("\n").filter((l) => l.startsWith("tdp_http_request_duration_seconds_count"));
    expect(counts).toEqual(
      expect.arrayContaining([
        'tdp_http_request_duration_seconds_count{route="/api/v1/offerings",method="GET",status="200"} 3',
        'tdp_http_request_duration_seconds_count{route="/api/v1/offerings/{id}",method="GET",status="404"} 1',
        'tdp_http_request_duration_seconds_count{route="/api/trpc/{procedure}",method="GET",status="404"} 1',
      ]),
    );
    // Probes are not timed; no label carries a raw path, id or query.
    expect(counts.filter((l) => /healthz|readyz|00000000|limit=|no\.such/.test(l))).toEqual([]);
  });

  it("sigterm_fails_readyz_at_once_serves_on_for_the_delay_answers_the_request_in_flight_then_exits", async () => {
    const url = server.url;
    const ask = async (what: string, path: string, headers: Record<string, string> = {}) => {
      const at = Date.now();
      const res = await fetch(url + path, { headers: { ...headers, connection: "close" } });
      return { at, what, status: res.status, body: (await res.json()) as unknown };
    };
    expect((await ask("readyz", "/readyz")).status).toBe(200);
    // A create in flight across the whole shutdown: its headers and half its body are at the server.
    const inFlight = splitBodyRequest(`${url}/api/v1/offerings`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "In flight under next start", price: "1.00", price_currency: "USD" }),
    });
    await inFlight.sent;

    const exited = exitOf(server.proc, 40_000);
    const signalledAt = Date.now();
    server.proc.kill("SIGTERM");
    const seen: Awaited<ReturnType<typeof ask>>[] = [];
    while (Date.now() - signalledAt < DELAY_MS - 500) {
      seen.push(await ask("readyz", "/readyz"), await ask("api", "/api/v1/offerings?limit=1", auth));
      await new Promise((r) => setTimeout(r, 100));
    }
    const readyz = seen.filter((s) => s.what === "readyz");
    const firstNotReady = readyz.findIndex((s) => s.status === 503);
    // Not ready within moments of the signal, and never ready again.
    expect(firstNotReady).toBeGreaterThanOrEqual(0);
    expect(readyz[firstNotReady]!.at - signalledAt).toBeLessThan(1_000);
    expect(readyz.slice(firstNotReady).map((s) => [s.status, s.body])).toEqual(readyz.slice(firstNotReady).map(() => [503, DRAINING]));
    // Meanwhile the process served on: every API request answered 200.
    expect(seen.filter((s) => s.what === "api").map((s) => s.status)).toEqual(seen.filter((s) => s.what === "api").map(() => 200));
    expect(seen.filter((s) => s.what === "api").length).toBeGreaterThan(3);

    // Past the delay the request in flight gets its real answer, and the process then exits (Next's own exit code for SIGTERM).
    await new Promise((r) => setTimeout(r, Math.max(0, signalledAt + DELAY_MS + 500 - Date.now())));
    inFlight.finish();
    const answer = await inFlight.answer;
    expect([answer.status, JSON.parse(answer.body).title]).toEqual([201, "In flight under next start"]);
    await waitUntilRefused(Number(new URL(url).port), 20_000);
    expect(await exited).toMatchObject({ code: 143 });
  }, 120_000);
});
