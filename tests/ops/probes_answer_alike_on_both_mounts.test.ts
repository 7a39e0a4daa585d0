// /healthz and /readyz at the root of both fronts (the lean front's node:http mount, and the app/
// route files under `next start`): the same statuses, bodies and headers; no key needed, no rate
// limit (bad credentials that /api/v1 answers 429 after two), no log line per call, and not in the
// OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { getOpenApiDocument } from "../../server/http/openapi";
import { requireNextBuild, startMount, type MountKind } from "../helpers/http-mounts";
import { eventually } from "../helpers/webhook-consumer";

requireNextBuild();

const READY = {
  status: "ready",
  failing: [],
  checks: { shutdown: "ok", database: "ok", migrations: "ok", webhook_engine: "ok", rate_limit_store: "memory" },
};
const UNKNOWN_KEY = { authorization: `Bearer xapk_live_${"0".repeat(48)}` };

type Answer = { status: number; body: string; headers: Record<string, string | null> };

async function ask(url: string, method = "GET", headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { method, headers, redirect: "manual" });
  return {
    status: res.status,
    body: await res.text(),
    headers: Object.fromEntries(["content-type", "cache-control", "allow"].map((h) => [h, res.headers.get(h)])),
  };
}

const kinds: MountKind[] = ["lean", "next"];

describe.each(kinds)("probes on the %s mount", (kind) => {
  let server: Running;
  beforeAll(async () => {
    server = await startMount(kind, {
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      RATE_LIMIT_FAILED_AUTH_PER_IP: "2",
      // A day-long window: three refusals straddling a minute's boundary would see only one of the
      // previous window's two (the sliding window floors its weighted count) and answer 401.
      RATE_LIMIT_WINDOW_SECONDS: "86400",
      LOG_LEVEL: "info",
    });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("healthz_200_ok_and_readyz_200_naming_every_check", async () => {
    const json = { "content-type": "application/json", "cache-control": "no-store", allow: null };
    expect(await ask(`${server.url}/healthz`)).toEqual({ status: 200, body: '{"status":"ok"}', headers: json });
    expect(await ask(`${server.url}/readyz`)).toEqual({ status: 200, body: JSON.stringify(READY), headers: json });
    expect(await ask(`${server.url}/readyz?verbose=1`)).toEqual({ status: 200, body: JSON.stringify(READY), headers: json });
    expect(await ask(`${server.url}/healthz`, "HEAD")).toEqual({ status: 200, body: "", headers: json });
  });

  it("405_naming_the_method_for_anything_but_get_and_head", async () => {
    expect(await ask(`${server.url}/readyz`, "POST")).toEqual({
      status: 405,
      body: JSON.stringify({ error: { code: "bad_request", message: "method POST not allowed on /readyz; use GET" } }),
      headers: { "content-type": "application/json", "cache-control": "no-store", allow: "GET, HEAD" },
    });
    expect((await ask(`${server.url}/healthz`, "DELETE")).status).toBe(405);
  });

  it("never_rate_limited_needs_no_key_and_logs_nothing_per_call", async () => {
    const before = server.output().length;
    const probes = [];
    for (let i = 0; i < 10; i++)
      probes.push((await ask(`${server.url}/readyz`, "GET", UNKNOWN_KEY)).status, (await ask(`${server.url}/healthz`, "GET", UNKNOWN_KEY)).status);
    expect(probes).toEqual(Array(20).fill(200));
    // The same credentials on the API: 401 twice, then the per-IP limit of failed authentication.
    const api = [];
    for (let i = 0; i < 3; i++) api.push((await ask(`${server.url}/api/v1/offerings`, "GET", UNKNOWN_KEY)).status);
    expect(api).toEqual([401, 401, 429]);
    // The API's three refusals are logged after the probes were answered: a line per probe would be in by then.
    await eventually(
      async () =>
        (server
          .output()
          .slice(before)
          .match(/"msg":"api auth refused"/g)?.length ?? 0) >= 3,
      5_000,
      10,
    );
    expect(server.output().slice(before)).not.toMatch(/healthz|readyz/);
  });
});

describe("the OpenAPI document", () => {
  it("does_not_list_the_probes", () => {
    const doc = getOpenApiDocument();
    expect(Object.keys(doc.paths ?? {}).length).toBeGreaterThan(10);
    expect(JSON.stringify(doc)).not.toMatch(/healthz|readyz/);
  });
});
