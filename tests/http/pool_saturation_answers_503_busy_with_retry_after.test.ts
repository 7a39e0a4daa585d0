// Every pooled connection busy for longer than a request may wait for one (DATABASE_POOL_SIZE=1,
// each create holding it for 0.4 s at its COMMIT, 40 creates at once): the requests that get no
// connection in time are answered 503 "the database is busy" with Retry-After, never a 500; none
// of them committed; and the breaker stays closed (the database is answering: no "database
// unreachable", no 503 "unavailable").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { DATABASE_BUSY_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { installSlowCommit, offeringIdsTitled } from "../helpers/slow-commit";

const CONCURRENT = 40;
const TITLE = "Slow commit 0.4";

describe.skipIf(!process.env.DATABASE_URL)("a saturated connection pool (PostgreSQL)", () => {
  let server: Running;
  let key: string;

  beforeAll(async () => {
    ({ key } = await tenantWithKey());
    await installSlowCommit();
    server = await startMount("lean", { DATABASE_POOL_SIZE: "1", DATABASE_CONNECT_TIMEOUT_MS: "1500" });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("pool_saturation_answers_503_database_busy_with_retry_after_never_500_and_nothing_committed_for_them", async () => {
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const res = await fetch(`${server.url}/api/v1/offerings`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ title: TITLE, price: "2.00", price_currency: "USD" }),
        });
        return { status: res.status, body: (await res.json()) as { id?: string }, retryAfter: res.headers.get("retry-after") };
      }),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(created.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.map((a) => [a.status, a.retryAfter, a.body])).toEqual(
      refused.map(() => [503, "2", { error: { code: "internal_error", message: DATABASE_BUSY_MESSAGE } }]),
    );
    expect((await offeringIdsTitled(TITLE)).sort()).toEqual(created.map((a) => a.body.id).sort());
    expect(server.output()).not.toMatch(/database unreachable|unhandled error/);
  }, 60_000);
});
