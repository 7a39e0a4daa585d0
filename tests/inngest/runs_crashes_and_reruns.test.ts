// The Inngest engine as an Inngest server drives it, over HTTP against a running app process
// (tests/helpers/inngest-server): events deduplicated by their ids, a step retried after the app
// died between sending an attempt and recording it, a rerun from the Inngest console, and both
// engines running at once on one database.
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { CONSOLE_RERUN_ACTOR } from "../../server/webhooks/inngest-engine";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { startInngestServer } from "../helpers/inngest-server/inngest-server";
import { dashboardCaller } from "../helpers/webhooks";
import { createOffering, deliveryState, EVENT_KEY, runsReport, settledDeliveries, SIGNING_KEY, startApp, subscribedTenant } from "./helpers";

/** The operator CLI (scripts/cli.ts) on this run's PostgreSQL. */
function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], {
      env: { ...process.env, SKIP_MIGRATIONS: "1", LOG_LEVEL: "silent" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const consumers: Consumer[] = [];
async function consumer(...args: Parameters<typeof startConsumer>) {
  const c = await startConsumer(...args);
  consumers.push(c);
  return c;
}
afterAll(async () => {
  for (const c of consumers) await c.close();
});

describe.skipIf(!process.env.DATABASE_URL)("Inngest runs over the wire", () => {
  it("every_event_carries_an_id_and_a_resend_of_it_is_a_no_op", async () => {
    // The event API stores the first POST but its answer is lost: the SDK sends the same events again.
    const inngest = await startInngestServer({ signingKey: SIGNING_KEY, eventKey: EVENT_KEY, loseEventAnswers: 1 });
    const { app } = await startApp("inngest", {}, inngest);
    try {
      const c = await consumer(200);
      const { tenantId, key } = await subscribedTenant(c.url());
      await createOffering(key);
      await settledDeliveries(tenantId);
      // The SDK resends after a backoff of its own, which a quick run may finish before: wait for the resend.
      for (const until = Date.now() + 30_000; inngest.eventPosts.length < 2 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
      await inngest.settled();
      const [delivery] = await (await openDatabase()).prisma.webhookDelivery.findMany({ where: { tenantId } });
      const sent = inngest.eventPosts.flatMap((p) => p.events);
      expect(sent.length).toBeGreaterThanOrEqual(2);
      // Every event names its delivery, cycle and due time in its id: the same delivery sent again is the same id.
      for (const e of sent) expect(e.id).toMatch(new RegExp(`^${delivery.id}-1-\\d+$`));
      expect(new Set(sent.map((e) => e.id)).size).toBe(1);
      // One event accepted, one run, one attempt, one request to the consumer.
      expect(inngest.accepted).toHaveLength(1);
      expect(inngest.runs).toHaveLength(1);
      expect(c.received).toHaveLength(1);
      // Anyone sending it again (a dispatcher whose lease ran out, an operator) starts nothing either.
      const again = await fetch(`${inngest.origin}/e/${EVENT_KEY}`, { method: "POST", body: JSON.stringify(sent[0]) });
      expect(again.status).toBe(200);
      await inngest.settled();
      expect(inngest.runs).toHaveLength(1);
      expect((await deliveryState(tenantId)).attempts).toHaveLength(1);
      expect(inngest.violations).toEqual([]);
    } finally {
      await app.stop();
      await inngest.close();
    }
  }, 120_000);

  it("a_step_retried_after_a_crash_between_sent_and_recorded_records_one_attempt", async () => {
    let app: Awaited<ReturnType<typeof startApp>>["app"] | undefined;
    let port = 0;
    // Inngest's retry comes after its backoff; by then the process is back (started again here).
    const inngest = await startInngestServer({
      signingKey: SIGNING_KEY,
      eventKey: EVENT_KEY,
      beforeCall: async () => {
        if (app?.proc.exitCode === null && app.proc.signalCode === null) return;
        app = (await startApp("inngest", {}, inngest, port)).app;
      },
    });
    const started = await startApp("inngest", {}, inngest);
    app = started.app;
    port = started.port;
    try {
      // The consumer gets the attempt; the app dies before it hears the answer (so before it records it).
      const c = await consumer((_req, i) => {
        if (i > 0) return 200;
        app!.proc.kill("SIGKILL");
        return "hang";
      });
      const { tenantId, key } = await subscribedTenant(c.url());
      await createOffering(key);
      await settledDeliveries(tenantId, 1, 90_000);
      await inngest.settled(90_000);
      const [run] = inngest.runs;
      expect(run.status, runsReport(inngest)).toBe("completed");
      // The call cut by the crash was retried (Inngest's retries of the function, not the ladder).
      expect(run.calls.some((call) => call.networkError)).toBe(true);
      expect(run.retries.length).toBeGreaterThanOrEqual(1);
      // Sent twice (at least once, by design: the consumer dedupes by webhook-id), recorded once.
      expect(c.received).toHaveLength(2);
      expect(c.received[1].headers["webhook-id"]).toBe(c.received[0].headers["webhook-id"]);
      const state = await deliveryState(tenantId);
      expect(state.deliveries).toEqual([expect.objectContaining({ status: "delivered", cycle: 1, attempt_count: 1 })]);
      expect(state.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome, a.status_code])).toEqual([[1, 1, "delivered", 200]]);
    } finally {
      await app?.stop();
      await inngest.close();
    }
  }, 180_000);

  it("a_run_that_fails_for_good_hands_its_delivery_back_and_a_new_run_delivers_it", async () => {
    // The app is unreachable for every call of the first delivery run: its retries run out.
    let firstRunId: string | undefined;
    const inngest = await startInngestServer({
      signingKey: SIGNING_KEY,
      eventKey: EVENT_KEY,
      unreachable: (run) => {
        if (run.functionId !== "tenant-data-platform-deliver-webhook") return false;
        firstRunId ??= run.id;
        return run.id === firstRunId;
      },
    });
    const { app } = await startApp("inngest", {}, inngest);
    try {
      const c = await consumer(200);
      const { tenantId, key } = await subscribedTenant(c.url());
      await createOffering(key);
      await settledDeliveries(tenantId, 1, 60_000);
      await inngest.settled();
      expect(
        inngest.runs.map((r) => [r.functionId, r.status]),
        runsReport(inngest),
      ).toEqual([
        ["tenant-data-platform-deliver-webhook", "failed"],
        ["tenant-data-platform-deliver-webhook-failure", "completed"],
        ["tenant-data-platform-deliver-webhook", "completed"],
      ]);
      // Five calls (Inngest's 4 retries), none reached the app; the failure event names the run.
      expect(inngest.runs[0].calls.map((call) => call.attempt)).toEqual([0, 1, 2, 3, 4]);
      const [failedEvent] = inngest.accepted.filter((e) => e.name === "inngest/function.failed");
      expect(failedEvent.data).toMatchObject({ function_id: "tenant-data-platform-deliver-webhook", run_id: firstRunId });
      // Handed back with a new due time: a new event id, so Inngest runs it (the first id is spent).
      const requested = inngest.accepted.filter((e) => e.name === "webhooks/delivery.requested");
      expect(requested).toHaveLength(2);
      expect(requested[1].id).not.toBe(requested[0].id);
      const state = await deliveryState(tenantId);
      expect(state.deliveries).toEqual([expect.objectContaining({ status: "delivered", cycle: 1, attempt_count: 1 })]);
      expect(c.received).toHaveLength(1);
    } finally {
      await app.stop();
      await inngest.close();
    }
  }, 120_000);

  it("a_console_rerun_of_a_finished_run_is_one_more_attempt_audited_like_a_dashboard_replay_and_no_new_event", async () => {
    const { app, inngest } = await startApp("inngest");
    try {
      const c = await consumer(410);
      const { tenantId, key } = await subscribedTenant(c.url());
      await createOffering(key);
      await settledDeliveries(tenantId);
      await inngest!.settled();
      const db = (await openDatabase()).prisma;
      const eventsBefore = await db.event.count({ where: { tenantId } });
      const [first] = inngest!.runs;
      expect(first.status).toBe("completed");
      // The operator fixed the endpoint and reruns the run from the console.
      c.setBehaviour(200);
      const rerun = inngest!.rerun(first);
      await rerun.done;
      expect(rerun.status, runsReport(inngest!)).toBe("completed");
      expect(rerun.output).toMatchObject({ cycle: 2, status: "delivered", attempt: 1 });
      const state = await deliveryState(tenantId);
      expect(state.deliveries).toEqual([expect.objectContaining({ status: "delivered", cycle: 2, attempt_count: 1 })]);
      expect(state.attempts.map((a) => [a.cycle, a.attempt_number, a.outcome, a.status_code])).toEqual([
        [1, 1, "permanent_fail", 410],
        [2, 1, "delivered", 200],
      ]);
      expect(c.received).toHaveLength(2);
      // Audited as a replay, by the console.
      const [delivery] = await db.webhookDelivery.findMany({ where: { tenantId } });
      const audit = await db.auditLog.findMany({ where: { tenantId, action: "delivery.replayed" } });
      expect(audit.map((a) => [a.actorType, a.actorLabel, a.targetId, a.details])).toEqual([
        ["system", CONSOLE_RERUN_ACTOR, delivery.id, expect.objectContaining({ cycle: 2, previous_state: "failed", inngest_run_id: rerun.id })],
      ]);
      // No second event: not in the app's events, not sent to Inngest.
      expect(await db.event.count({ where: { tenantId } })).toBe(eventsBefore);
      expect(inngest!.accepted).toHaveLength(1);
      // The dashboard's delivery page and the CLI show the engine of each attempt.
      const page = await dashboardCaller(tenantId).webhooks.listDeliveries({});
      expect(page.data[0].attempts.map((a) => [a.cycle, a.engine])).toEqual([
        [1, "inngest"],
        [2, "inngest"],
      ]);
      const cli = await runCli(["delivery", "list", "--tenant", tenantId]);
      expect(cli.code, cli.stderr).toBe(0);
      expect(JSON.parse(cli.stdout).data[0].attempts.map((a: { engine: string }) => a.engine)).toEqual(["inngest", "inngest"]);
    } finally {
      await app.stop();
      await inngest!.close();
    }
  }, 120_000);

  it("both_engines_at_once_never_send_one_attempt_twice", async () => {
    // A migration: one process on Inngest, one on the embedded worker, one database.
    const onInngest = await startApp("inngest");
    const embedded = await startApp("embedded");
    try {
      const cs = await Promise.all([0, 1, 2, 3].map(() => consumer((_req, i) => (i % 2 === 0 ? 500 : 200))));
      const tenants = await Promise.all(cs.map((c) => subscribedTenant(c.url())));
      for (let round = 0; round < 5; round++) await Promise.all(tenants.map((t) => createOffering(t.key)));
      for (const t of tenants) await settledDeliveries(t.tenantId, 5, 90_000);
      await onInngest.inngest!.settled(90_000);
      const db = (await openDatabase()).prisma;
      const attempts = await db.webhookAttempt.findMany({ where: { tenantId: { in: tenants.map((t) => t.tenantId) } } });
      // Every request a consumer got is exactly one recorded attempt: none sent by both engines, none unrecorded.
      const requests = cs.flatMap((c) => c.received.map((r) => r.headers["webhook-id"]));
      expect(requests.length).toBe(attempts.length);
      const perDelivery = new Map<string, typeof attempts>();
      for (const a of attempts) perDelivery.set(a.deliveryId, [...(perDelivery.get(a.deliveryId) ?? []), a]);
      expect(perDelivery.size).toBe(20);
      for (const list of perDelivery.values()) {
        list.sort((a, b) => a.attemptNumber - b.attemptNumber);
        // Each delivery: its attempts numbered 1..n once each, every one by a known engine; once Inngest
        // took a delivery it kept it (a dispatched delivery is never claimed by an embedded worker).
        expect(list.map((a) => a.attemptNumber)).toEqual(list.map((_a, i) => i + 1));
        const engines = list.map((a) => a.engine);
        expect(engines.every((e) => e === "embedded" || e === "inngest")).toBe(true);
        expect(engines.slice(engines.indexOf("inngest") < 0 ? engines.length : engines.indexOf("inngest")).every((e) => e === "inngest")).toBe(true);
      }
      expect((await db.webhookDelivery.findMany({ where: { tenantId: { in: tenants.map((t) => t.tenantId) } } })).every((d) => d.status === "delivered")).toBe(
        true,
      );
      expect(onInngest.inngest!.violations).toEqual([]);
    } finally {
      await embedded.app.stop();
      await onInngest.app.stop();
      await onInngest.inngest!.close();
    }
  }, 180_000);
});
