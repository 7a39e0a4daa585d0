// A real PostgreSQL paused with SIGSTOP for 15 s (server and every backend: connections stay open,
// nothing answers) under a lean front with the default 10 s query timeout, while concurrent clients
// read and create. Every request is answered within the documented bound (10 s + the 1 s client
// margin + a sweep), none is a bare 500. A create whose COMMIT was running when the server froze
// is answered `outcome_unknown` (and indeed commits after SIGCONT), never a retryable 503. And the
// statement that was running when the server froze (an INSERT held 40 s by a trigger) does not go
// on running after SIGCONT: PostgreSQL's own statement_timeout cancels it (pg_stat_activity).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { DATABASE_BUSY_MESSAGE, DATABASE_UNAVAILABLE_MESSAGE, OUTCOME_UNKNOWN_MESSAGE } from "../../server/lib/database-errors";
import { tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { onDatabase, PostgresServer } from "../helpers/postgres-server";
import { installSlowCommit, installSlowInsert, offeringIdsTitled } from "../helpers/slow-commit";
import { eventually } from "../helpers/webhook-consumer";

const PAUSE_MS = 15_000;
/** DATABASE_QUERY_TIMEOUT_MS's default, plus the client's 1 s margin, a 0.25 s sweep and slack for a shared machine. */
const BOUND_MS = 10_000 + 1_000 + 250 + 750;
const CLIENTS = 8;

type Answer = { surface: string; at: number; ms: number; status: number; body: { error?: { code: string; message: string } } };

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL paused for 15 s under concurrent requests (real processes)", () => {
  let cluster: PostgresServer;
  let server: Running;
  let key: string;

  beforeAll(async () => {
    cluster = await PostgresServer.start();
    await installSlowCommit(cluster.url);
    await installSlowInsert(cluster.url);
    ({ key } = await onDatabase(cluster.url, () => tenantWithKey()));
    server = await startMount("lean", { DATABASE_URL: cluster.url });
  }, 180_000);

  afterAll(async () => {
    cluster?.signalAll("SIGCONT");
    await server?.stop();
    await cluster?.destroy();
  });

  async function send(surface: "read" | "create", title = "Paused"): Promise<Answer> {
    const at = Date.now();
    const auth = { authorization: `Bearer ${key}` };
    const res =
      surface === "read"
        ? await fetch(`${server.url}/api/v1/offerings?limit=1`, { headers: auth, signal: AbortSignal.timeout(60_000) })
        : await fetch(`${server.url}/api/v1/offerings`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: JSON.stringify({ title, price: "1.00", price_currency: "USD" }),
            signal: AbortSignal.timeout(60_000),
          });
    return { surface, at, ms: Date.now() - at, status: res.status, body: (await res.json()) as Answer["body"] };
  }

  // Only this test's own statements: the two its triggers hold in pg_sleep. The server's background
  // work (claims, the SLA check, retention) may be running beside them at any moment.
  const heldStatements = () =>
    cluster.query<{ pid: number; state: string; query: string }>(
      "SELECT pid, state, query FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle' AND wait_event = 'PgSleep'",
    );

  it("every_request_answered_within_the_bound_the_frozen_commit_is_outcome_unknown_and_no_statement_runs_on_after_sigcont", async () => {
    expect((await send("read")).status).toBe(200);
    expect((await send("create")).status).toBe(201);

    // Running on the server when it freezes: an INSERT a trigger holds for 40 s, and a COMMIT whose
    // deferred trigger sleeps 3 s.
    const held = send("create", "Slow insert 40");
    const committing = send("create", "Slow commit 3");
    // Both have reached their pg_sleep before the pause (each its own moment; polled, not guessed).
    const heldNow = await eventually(async () => ((held) => held.length >= 2 && held)(await heldStatements()), 10_000);
    expect(heldNow.map((s) => s.query.slice(0, 6)).sort()).toEqual(["COMMIT", "INSERT"]);

    cluster.signalAll("SIGSTOP");
    const pausedAt = Date.now();
    const answers: Answer[] = [];
    // Concurrent clients, each sending one request after another for the whole pause.
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        while (Date.now() < pausedAt + PAUSE_MS) {
          answers.push(await send(i % 2 ? "read" : "create"));
          await new Promise((r) => setTimeout(r, 100));
        }
      }),
    );
    const [heldAnswer, committingAnswer] = await Promise.all([held, committing]);
    cluster.signalAll("SIGCONT");
    const resumedAt = Date.now();

    // The committing create: its COMMIT was running and the connection given up, so it may have committed.
    expect([committingAnswer.status, committingAnswer.body]).toEqual([500, { error: { code: "outcome_unknown", message: OUTCOME_UNKNOWN_MESSAGE } }]);
    expect(committingAnswer.ms).toBeLessThan(BOUND_MS + 1_000);
    // The held INSERT: given up too (the server said nothing), answered within the bound.
    expect(heldAnswer.status).toBeGreaterThanOrEqual(500);
    expect(heldAnswer.ms).toBeLessThan(BOUND_MS + 1_000);

    expect(answers.length).toBeGreaterThan(CLIENTS * 3);
    expect(answers.filter((a) => a.ms > BOUND_MS)).toEqual([]);
    const allowed = new Set([DATABASE_UNAVAILABLE_MESSAGE, DATABASE_BUSY_MESSAGE, OUTCOME_UNKNOWN_MESSAGE]);
    expect(answers.filter((a) => a.status < 500 || !allowed.has(a.body.error?.message ?? ""))).toEqual([]);
    expect(answers.filter((a) => a.status === 500 && a.body.error?.code !== "outcome_unknown")).toEqual([]);

    // After SIGCONT PostgreSQL's statement_timeout (long past) cancels the held INSERT at once and the
    // COMMIT finishes its last 2 s: nothing goes on running. The INSERT did not commit; the COMMIT
    // did, which is why its answer could not be "retry".
    let still = await heldStatements();
    while (still.length && Date.now() < resumedAt + 4_000) {
      await new Promise((r) => setTimeout(r, 100));
      still = await heldStatements();
    }
    expect(still).toEqual([]);
    expect(await offeringIdsTitled("Slow insert 40", cluster.url)).toEqual([]);
    expect(await offeringIdsTitled("Slow commit 3", cluster.url)).toHaveLength(1);
    expect(server.output()).not.toMatch(/unhandled error/);

    // And the front serves again without a restart.
    const deadline = Date.now() + 8_000;
    let after = await send("read");
    while (after.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await send("read");
    }
    expect(after.status).toBe(200);
    expect((await send("create")).status).toBe(201);
  }, 120_000);
});
