// One table of delivery scenarios, run on the embedded worker and on the Inngest engine (a real app
// process serving /api/inngest, driven by tests/helpers/inngest-server over HTTP), against real
// consumers on 127.0.0.1: both engines must leave exactly the same deliveries, attempt logs and alerts.
import { afterAll, describe, expect, it } from "vitest";
import { startConsumer, type Behaviour, type Consumer } from "../helpers/webhook-consumer";
import { createOffering, deliveryState, runsReport, settledDeliveries, startApp, subscribedTenant, type Engine } from "./helpers";
import { openDatabase } from "../../server/db/database";

type Row = [attempt: number, outcome: string, status: number | null, throttled: boolean];
type Scenario = { name: string; answers: Behaviour[]; status: string; attempts: Row[]; alerts: string[] };

const SCENARIOS: Scenario[] = [
  { name: "success first time", answers: [200], status: "delivered", attempts: [[1, "delivered", 200, false]], alerts: [] },
  {
    name: "500 then success",
    answers: [500, 200],
    status: "delivered",
    attempts: [
      [1, "retry", 500, false],
      [2, "delivered", 200, false],
    ],
    alerts: [],
  },
  {
    name: "a timeout then success",
    answers: ["hang", 200],
    status: "delivered",
    attempts: [
      [1, "retry", null, false],
      [2, "delivered", 200, false],
    ],
    alerts: [],
  },
  { name: "410 is permanent", answers: [410], status: "permanent_fail", attempts: [[1, "permanent_fail", 410, false]], alerts: [] },
  {
    name: "429 with Retry-After",
    answers: [{ status: 429, headers: { "retry-after": "1" } }, 200],
    status: "delivered",
    attempts: [
      [1, "retry", 429, true],
      [2, "delivered", 200, false],
    ],
    alerts: [],
  },
  {
    name: "dead letter after the last attempt",
    answers: [503],
    status: "dead_letter",
    attempts: [1, 2, 3, 4, 5, 6].map((n) => [n, "retry", 503, false] as Row),
    alerts: ["webhook.dead_letter"],
  },
];

const results: Record<Engine, Record<string, unknown>> = { embedded: {}, inngest: {} };
const consumers: Consumer[] = [];
afterAll(async () => {
  for (const c of consumers) await c.close();
});

describe.skipIf(!process.env.DATABASE_URL)("the scenario table on both engines", () => {
  it.each(["embedded", "inngest"] as Engine[])(
    "every_scenario_on_%s",
    async (engine) => {
      const { app, inngest } = await startApp(engine);
      try {
        const ran = await Promise.all(
          SCENARIOS.map(async (s) => {
            const consumer = await startConsumer((_req, i) => s.answers[Math.min(i, s.answers.length - 1)]);
            consumers.push(consumer);
            const { tenantId, key } = await subscribedTenant(consumer.url());
            await createOffering(key);
            await settledDeliveries(tenantId, 1, 60_000);
            return { s, tenantId, consumer };
          }),
        );
        await inngest?.settled();
        for (const { s, tenantId, consumer } of ran) {
          const state = await deliveryState(tenantId);
          expect(state.deliveries, s.name).toEqual([expect.objectContaining({ status: s.status, cycle: 1, attempt_count: s.attempts.length })]);
          expect(
            state.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code, a.throttled]),
            s.name,
          ).toEqual(s.attempts);
          expect(
            state.alerts.map((a) => a.kind),
            s.name,
          ).toEqual(s.alerts);
          // Each attempt was one request: nothing sent twice, nothing sent unrecorded.
          expect(consumer.received.length, s.name).toBe(s.attempts.length);
          const attempts = await (await openDatabase()).prisma.webhookAttempt.findMany({ where: { tenantId } });
          expect(
            attempts.map((a) => a.engine),
            s.name,
          ).toEqual(attempts.map(() => engine));
          results[engine][s.name] = state;
        }
        if (inngest) {
          // One event per dispatched delivery; every run finished; the SDK kept to the protocol.
          expect(inngest.accepted).toHaveLength(SCENARIOS.length);
          expect(inngest.runs.map((r) => r.status)).toEqual(SCENARIOS.map(() => "completed"));
          expect(inngest.violations).toEqual([]);
          const deadLetterRun = inngest.runs.find((r) => (r.output as { status?: string })?.status === "dead_letter")!;
          // The ladder's waits became Sleep steps (fast-forwarded here), named for the attempt they precede; the SDK
          // rounds the 100 ms of WEBHOOK_RETRY_DELAYS_MS up to "1s", the least a durable sleep can be.
          expect(deadLetterRun.sleeps.map((z) => [z.name, z.ms])).toEqual([2, 3, 4, 5, 6].map((n) => [`backoff-${n}`, 1000]));
        }
      } catch (err) {
        // What the harness saw, to tell a protocol failure from a delivery one.
        if (inngest) console.log(runsReport(inngest), app.output().slice(-3000));
        throw err;
      } finally {
        await app.stop();
        await inngest?.close();
      }
    },
    180_000,
  );

  it("both_engines_leave_the_same_rows_attempt_log_and_alerts", () => {
    expect(Object.keys(results.embedded)).toHaveLength(SCENARIOS.length);
    expect(results.inngest).toEqual(results.embedded);
  });
});
