// The fault behind Idempotency-Key: a create whose COMMIT outlasts the query timeout and its margin
// (PostgreSQL's statement_timeout does not cover a COMMIT's deferred work) is given up by the client
// and answered 500 `outcome_unknown` ("retry only with the same Idempotency-Key"), never a retryable
// 503, and indeed commits a moment later. A client that retries with the same key gets the
// committed create's answer (replayed), not a second create. And a repeat while the first is still
// running is a 409 at once, with Retry-After. Real PostgreSQL: a deferred constraint trigger holds
// the COMMIT of offerings titled "Slow commit <seconds>".
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { OUTCOME_UNKNOWN_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { appointmentIdsNamed, installSlowCommit, offeringIdsTitled } from "../helpers/slow-commit";
import { eventually } from "../helpers/webhook-consumer";

describe.skipIf(!process.env.DATABASE_URL)("a create whose outcome the client could not know (PostgreSQL)", () => {
  let server: Running;
  let key: string;

  beforeAll(async () => {
    ({ key } = await tenantWithKey());
    await installSlowCommit();
    server = await startMount("lean", { DATABASE_QUERY_TIMEOUT_MS: "1000" });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  type Answer = { status: number; text: string; retryAfter: string | null; replayed: string | null };
  async function post(path: string, body: unknown, idempotencyKey: string): Promise<Answer> {
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), retryAfter: res.headers.get("retry-after"), replayed: res.headers.get("idempotent-replayed") };
  }
  const create = (title: string, idempotencyKey: string) => post("/offerings", { title, price: "9.00", price_currency: "USD" }, idempotencyKey);
  const book = (name: string, idempotencyKey: string) =>
    post(
      "/appointments",
      { customer_name: name, customer_phone: "+971501000002", scheduled_start: "2026-12-01T09:00:00.000Z", scheduled_end: "2026-12-01T09:30:00.000Z" },
      idempotencyKey,
    );

  /** Retries as a client obeying Retry-After would, until the answer is not "wait" (503 or 409). */
  async function retryUntilAnswered(send: () => Promise<Answer>): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      await new Promise((r) => setTimeout(r, 300));
      const answer = await send();
      if (answer.status !== 503 && answer.status !== 409) return answer;
      expect(answer.retryAfter).not.toBeNull();
      expect(attempt).toBeLessThan(40);
    }
  }

  it("a_create_whose_commit_was_given_up_is_outcome_unknown_and_the_retry_with_the_key_answers_the_committed_201_not_a_second_create", async () => {
    const title = "Slow commit 3";
    const first = await create(title, "unknown-outcome");
    expect([first.status, JSON.parse(first.text), first.retryAfter]).toEqual([
      500,
      { error: { code: "outcome_unknown", message: OUTCOME_UNKNOWN_MESSAGE } },
      null,
    ]);
    // The client obeys: it retries with the same key until it has an answer that is not "wait".
    const answer = await retryUntilAnswered(() => create(title, "unknown-outcome"));
    expect([answer.status, answer.replayed]).toEqual([201, "true"]);
    expect(await offeringIdsTitled(title)).toEqual([JSON.parse(answer.text).id]);
  }, 60_000);

  it("a_booking_whose_commit_was_given_up_is_outcome_unknown_and_the_retry_with_the_key_answers_the_committed_201_not_a_second_booking", async () => {
    // A booking is one prepared statement; with a key it runs in the transaction that stores the answer.
    const name = "Slow commit 3";
    const first = await book(name, "unknown-booking");
    expect([first.status, JSON.parse(first.text).error.code, first.retryAfter]).toEqual([500, "outcome_unknown", null]);
    const answer = await retryUntilAnswered(() => book(name, "unknown-booking"));
    expect([answer.status, answer.replayed]).toEqual([201, "true"]);
    expect(await appointmentIdsNamed(name)).toEqual([JSON.parse(answer.text).id]);
  }, 60_000);

  it("a_repeat_while_the_first_is_still_running_is_409_with_retry_after_then_the_first_answer_is_replayed", async () => {
    const title = "Slow commit 0.8";
    const first = create(title, "concurrent");
    // The first is in its COMMIT's 0.8 s (its key claimed long before): seen in pg_stat_activity, not guessed.
    await eventually(async () => {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND wait_event = 'PgSleep' AND query ILIKE 'COMMIT%'",
        );
        return rows.length > 0;
      } finally {
        await client.end();
      }
    }, 5_000);
    const during = await create(title, "concurrent");
    expect([during.status, JSON.parse(during.text), during.retryAfter]).toEqual([
      409,
      { error: { code: "conflict", message: 'a request with Idempotency-Key "concurrent" is still in progress; retry once it has been answered' } },
      "1",
    ]);
    const answered = await first;
    expect([answered.status, answered.replayed]).toEqual([201, null]);
    const after = await create(title, "concurrent");
    expect([after.status, after.text, after.replayed]).toEqual([201, answered.text, "true"]);
    expect(await offeringIdsTitled(title)).toEqual([JSON.parse(answered.text).id]);
  }, 60_000);
});
