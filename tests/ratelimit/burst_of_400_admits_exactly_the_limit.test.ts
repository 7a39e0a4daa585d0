// A burst never exceeds a limit: 400 concurrent requests on one key limited to 200/min get exactly
// 200 admissions (each with its X-RateLimit-* headers) and 200 refusals with exact headers, on the
// in-process store and on a real Redis (through the in-memory fallback wrapper production uses, so
// a busy process cannot turn into an unlimited one).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLogLines, type LogLines, releaseLogLines } from "../helpers/log-lines";
import { createSurfaceLimiters, withMemoryFallback, type LimitDecision } from "../../server/ratelimit";
import { DEFAULTS, STORE_KINDS, freezeDateAt, restoreDateAfterEach, useStore } from "./store-fixtures";

const MINUTE_START = Date.UTC(2030, 0, 1, 0, 0, 0);
const T0 = MINUTE_START + 30_000;
const RESET_S = String((MINUTE_START + 60_000) / 1000);

const burst = (n: number, check: () => Promise<LimitDecision>) => Promise.all(Array.from({ length: n }, check));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe.each(STORE_KINDS)("a burst on the %s store", (kind) => {
  const store = useStore(kind);
  restoreDateAfterEach();
  let logs: LogLines;
  let savedLogLevel: string | undefined;
  beforeEach(() => {
    savedLogLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "warn"; // the test setup silences logs; an outage warning must show here
    logs = captureLogLines();
  });
  afterEach(() => {
    releaseLogLines();
    process.env.LOG_LEVEL = savedLogLevel;
  });

  it("429_burst_of_400_on_one_key_limited_to_200_admits_exactly_200_and_refuses_200_with_exact_headers", async () => {
    freezeDateAt(T0);
    const resilient = withMemoryFallback(store());
    const { api } = createSurfaceLimiters(resilient, DEFAULTS);
    const decisions = await burst(400, () => api.check({ key: "key-a", tenant: "tenant-1" }));

    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted).toHaveLength(200);
    // Every admission carries the per-key headers; each remaining count is handed out once.
    for (const d of admitted) {
      expect(Object.keys(d.headers).sort()).toEqual(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]);
      expect(d.headers["X-RateLimit-Limit"]).toBe("200");
      expect(d.headers["X-RateLimit-Reset"]).toBe(RESET_S);
    }
    expect(admitted.map((d) => Number(d.headers["X-RateLimit-Remaining"])).sort((a, b) => a - b)).toEqual(range(200));
    for (const d of decisions.filter((d) => !d.allowed)) {
      expect(d).toEqual({
        allowed: false,
        message: "per-key rate limit exceeded",
        headers: { "Retry-After": "30", "X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET_S },
      });
    }
    // Refused requests counted against no layer: the tenant has 200 of its 5000 used.
    expect((await api.check({ key: "key-b", tenant: "tenant-1" })).headers["X-RateLimit-Remaining"]).toBe("199");
    expect(logs.at("warn")).toEqual([]); // the shared store was never marked down
    await resilient.close();
  });

  it("429_a_second_burst_in_the_same_window_admits_none_and_one_in_the_next_window_only_what_the_sliding_window_frees", async () => {
    freezeDateAt(T0);
    const resilient = withMemoryFallback(store());
    const { api } = createSurfaceLimiters(resilient, DEFAULTS);
    const check = () => api.check({ key: "key-a", tenant: "tenant-1" });
    expect((await burst(400, check)).filter((d) => d.allowed)).toHaveLength(200);
    expect((await burst(400, check)).filter((d) => d.allowed)).toHaveLength(0);
    // Halfway into the next minute half of the previous window still counts: 100 more.
    freezeDateAt(T0 + 60_000);
    expect((await burst(400, check)).filter((d) => d.allowed)).toHaveLength(100);
    await resilient.close();
  });
});
