// SIGTERM to the lean front with SHUTDOWN_DELAY_MS: from the signal on /readyz answers 503 naming
// the shutdown, while the front goes on serving (new connections, API requests, /healthz) for the
// delay, so a load balancer takes it out of rotation before it stops listening; then the port
// refuses, the request in flight gets its 201, and the process exits 0.
import { afterEach, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { exitOf, roundTrip, splitBodyRequest, waitUntilRefused } from "../helpers/http-client";
import { startMount } from "../helpers/http-mounts";

const DELAY_MS = 3_000;
const READY = {
  status: "ready",
  failing: [],
  checks: { shutdown: "ok", database: "ok", migrations: "ok", webhook_engine: "ok", rate_limit_store: "memory" },
};
const DRAINING = { status: "not_ready", failing: ["shutdown"], checks: { shutdown: "draining" } };

let server: Running | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

type Seen = { at: number; what: string; status: number; body: unknown };

describe("/readyz from SIGTERM on", () => {
  it("503_shutdown_draining_from_sigterm_while_serving_on_for_the_delay_then_refused_in_flight_201_exit_0", async () => {
    const { key } = await tenantWithKey();
    const auth = { authorization: `Bearer ${key}` };
    server = await startMount("lean", {
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: "20000",
    });
    const url = server.url;
    const ask = async (what: string, path: string, headers: Record<string, string> = {}): Promise<Seen> => {
      const at = Date.now();
      const res = await fetch(url + path, { headers: { ...headers, connection: "close" } });
      return { at, what, status: res.status, body: await res.json() };
    };
    expect(await ask("readyz", "/readyz")).toMatchObject({ status: 200, body: READY });

    // A create in flight across the whole shutdown: its headers and half its body are at the server.
    const inFlight = splitBodyRequest(`${url}/api/v1/offerings`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "In flight", price: "1.00", price_currency: "USD" }),
    });
    await inFlight.sent;
    expect(await roundTrip(`${url}/healthz`)).toBe(200);

    const exited = exitOf(server.proc, 40_000);
    const signalledAt = Date.now();
    server.proc.kill("SIGTERM");
    const seen: Seen[] = [];
    let refusedAt = 0;
    const port = Number(new URL(url).port);
    const refused = waitUntilRefused(port, 15_000).then(() => (refusedAt = Date.now()));
    while (!refusedAt) {
      try {
        seen.push(await ask("readyz", "/readyz"), await ask("healthz", "/healthz"), await ask("api", "/api/v1/offerings?limit=1", auth));
      } catch {
        break; // refused: the delay is over
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await refused;

    const readyz = seen.filter((s) => s.what === "readyz");
    const firstNotReady = readyz.findIndex((s) => s.status === 503);
    // Not ready at once (the signal is handled within moments), and never ready again.
    expect(readyz[firstNotReady]!.at - signalledAt).toBeLessThan(1_000);
    expect(readyz.slice(firstNotReady).map((s) => [s.status, s.body])).toEqual(readyz.slice(firstNotReady).map(() => [503, DRAINING]));
    // Asked through the delay (a count of rounds would depend on the machine's load): one in its second half.
    expect(readyz.at(-1)!.at - signalledAt).toBeGreaterThanOrEqual(DELAY_MS / 2);
    // Meanwhile the front served on: liveness and the API answered every request, also late in the delay.
    expect(seen.filter((s) => s.what !== "readyz" && s.status !== 200)).toEqual([]);
    expect(seen.filter((s) => s.what === "api").at(-1)!.at - signalledAt).toBeGreaterThanOrEqual(DELAY_MS / 2);
    // It stopped listening only after the delay.
    expect(refusedAt - signalledAt).toBeGreaterThanOrEqual(DELAY_MS);
    expect(refusedAt - signalledAt).toBeLessThan(DELAY_MS + 3_000);

    inFlight.finish();
    const answer = await inFlight.answer;
    expect([answer.status, JSON.parse(answer.body).title, answer.headers.connection]).toEqual([201, "In flight", "close"]);
    expect(await exited).toMatchObject({ code: 0, signal: null });
  }, 120_000);
});
