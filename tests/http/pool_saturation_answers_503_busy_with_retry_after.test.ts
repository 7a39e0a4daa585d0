// Every pooled connection busy for longer than a request may wait for one (DATABASE_POOL_SIZE=1,
// each create holding it for 0.4 s at its COMMIT, 40 creates at once): the requests that get no
// connection in time are answered 503 "the database is busy" with Retry-After, never a 500; none
// of them committed; and the breaker stays closed (the database is answering: no "database
// unreachable", no 503 "unavailable"). A 503 is not stored with the request's Idempotency-Key, so
// its retry creates.
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

  it("pool_saturation_answers_503_database_busy_with_retry_after_never_500_nothing_committed_and_the_retry_with_the_key_creates", async () => {
    const create = async (i: number) => {
      const res = await fetch(`${server.url}/api/v1/offerings`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `saturated-${i}` },
        body: JSON.stringify({ title: TITLE, price: "2.00", price_currency: "USD" }),
      });
      const answer = { i, status: res.status, body: (await res.json()) as { id?: string }, retryAfter: res.headers.get("retry-after") };
      return { ...answer, replayed: res.headers.get("idempotent-replayed") };
    };
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => create(i)));
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(created.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.map((a) => [a.status, a.retryAfter, a.body])).toEqual(
      refused.map(() => [503, "2", { error: { code: "internal_error", message: DATABASE_BUSY_MESSAGE } }]),
    );
    expect((await offeringIdsTitled(TITLE)).sort()).toEqual(created.map((a) => a.body.id).sort());
    expect(server.output()).not.toMatch(/database unreachable|unhandled error/);

    // A 503 is not stored with its Idempotency-Key: the retry (once the pool is free) creates.
    for (const refusal of refused.slice(0, 3)) {
      const retried = await create(refusal.i);
      expect([retried.status, retried.replayed]).toEqual([201, null]);
      created.push(retried);
    }
    expect((await offeringIdsTitled(TITLE)).sort()).toEqual(created.map((a) => a.body.id).sort());
  }, 60_000);
});
