// The sync handshake and the signature check of /api/inngest, over HTTP against a running app
// process, with tests/helpers/inngest-server playing Inngest's side.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverWebhook, checkHandoffSla } from "../../server/webhooks/inngest-engine";
import { setting } from "../../server/lib/settings";
import { RETENTION_CRON } from "../../server/retention/retention.inngest";
import { startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { hashSigningKey, signBody, SPEC } from "../helpers/inngest-server/inngest-server";
import { createOffering, deliveryState, settledDeliveries, SIGNING_KEY, startApp, subscribedTenant } from "./helpers";

describe.skipIf(!process.env.DATABASE_URL)("Inngest over the wire: sync and signatures", () => {
  let started: Awaited<ReturnType<typeof startApp>>;
  let consumer: Consumer;
  beforeAll(async () => {
    started = await startApp("inngest");
    consumer = await startConsumer(200);
  }, 120_000);
  afterAll(async () => {
    await started?.app.stop();
    await started?.inngest?.close();
    await consumer?.close();
  });

  it("sync_registers_every_function_with_its_configuration", async () => {
    const inngest = started.inngest!;
    expect(inngest.syncs).toHaveLength(1);
    const [sync] = inngest.syncs;
    // Authorized with the hashed signing key (SPEC 4.1.4), the sync payload of SPEC 4.3.2.
    expect(sync.headers.authorization).toBe(`Bearer ${hashSigningKey(SIGNING_KEY)}`);
    expect(sync.headers["x-inngest-expected-server-kind"]).toBe("cloud");
    expect(sync.body).toMatchObject({
      url: started.endpoint,
      deployType: "ping",
      appName: "tenant-data-platform",
      v: "0.1",
      sdk: expect.stringMatching(/^js:v4\.24\.0$/),
    });
    const byId = Object.fromEntries(inngest.functions().map((f) => [f.id, f]));
    expect(Object.keys(byId).sort()).toEqual([
      "tenant-data-platform-check-handoff-sla",
      "tenant-data-platform-deliver-webhook",
      "tenant-data-platform-deliver-webhook-failure",
      "tenant-data-platform-retention-purge",
    ]);
    const deliver = byId["tenant-data-platform-deliver-webhook"];
    expect(deliver.triggers).toEqual([{ event: "webhooks/delivery.requested" }]);
    expect(deliver.steps.step.retries).toEqual({ attempts: deliverWebhook.opts.retries });
    expect(deliver.steps.step.runtime).toEqual({
      type: "http",
      url: `${started.endpoint}?fnId=tenant-data-platform-deliver-webhook&stepId=step`,
    });
    expect(deliver.concurrency).toEqual([
      { key: "event.data.subscription_id", limit: setting("WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT") },
      { key: "event.data.tenant_id", limit: setting("WEBHOOK_MAX_IN_FLIGHT_PER_TENANT") },
    ]);
    // No throttle, rate limit, debounce or batching: the pacing is the app's own (send slots, breaker).
    for (const k of ["throttle", "rateLimit", "debounce", "batchEvents", "idempotency", "cancel"]) expect(deliver[k]).toBeUndefined();
    // The delivery function's failure handler: a run that failed for good hands its delivery back.
    const failure = byId["tenant-data-platform-deliver-webhook-failure"];
    expect(failure.triggers).toEqual([{ event: "inngest/function.failed", expression: "event.data.function_id == 'tenant-data-platform-deliver-webhook'" }]);
    expect(failure.steps.step.retries).toEqual({ attempts: 1 });
    const sla = byId["tenant-data-platform-check-handoff-sla"];
    expect(sla.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(sla.steps.step.retries).toEqual({ attempts: checkHandoffSla.opts.retries });
    expect(sla.concurrency).toBeUndefined();
    // The retention purge (server/retention/): hourly, the same job each process's timer runs.
    const purge = byId["tenant-data-platform-retention-purge"];
    expect(purge.triggers).toEqual([{ cron: RETENTION_CRON }]);
    expect(purge.steps.step.retries).toEqual({ attempts: 2 });
    expect(purge.concurrency).toBeUndefined();
  });

  it("a_second_sync_of_the_same_app_changes_nothing", async () => {
    const again = await started.inngest!.sync(started.endpoint);
    expect(again).toEqual({ status: 200, body: { message: expect.any(String), modified: false } });
  });

  it("the_sla_check_runs_on_its_schedule_as_one_step", async () => {
    // What Inngest sends for a cron trigger: an inngest/scheduled.timer event.
    const run = started.inngest!.trigger("tenant-data-platform-check-handoff-sla", { name: "inngest/scheduled.timer", data: { cron: "* * * * *" } });
    await run.done;
    expect(run.status, JSON.stringify(run.calls)).toBe("completed");
    expect(run.output).toEqual({ breaches: expect.any(Number) });
    expect(Object.keys(run.steps)).toHaveLength(1);
    expect(started.inngest!.violations).toEqual([]);
  });

  it("unsigned_or_wrongly_signed_calls_are_refused_and_change_nothing", async () => {
    const inngest = started.inngest!;
    const { tenantId, key } = await subscribedTenant(consumer.url());
    // Wait for the dispatched run to finish so the rows are still afterwards.
    await createOffering(key);
    await settledDeliveries(tenantId);
    await inngest.settled();
    const before = await deliveryState(tenantId);
    const received = consumer.received.length;
    const fn = "tenant-data-platform-deliver-webhook";
    const refusals = [
      ["no signature", () => null],
      ["another key", (body: string) => signBody(body, `signkey-test-${"cd34".repeat(16)}`)],
      ["a tampered body", (body: string) => signBody(`${body} `, SIGNING_KEY)],
      ["an expired timestamp", (body: string) => signBody(body, SIGNING_KEY, Math.floor(Date.now() / 1000) - 600)],
      ["garbage", () => "t=1&s=00"],
    ] as const;
    for (const [, sign] of refusals) {
      const res = await inngest.rawCall(fn, sign);
      // Refused. SPEC 4.1.3 (SPEC#L320-L331) says 500; inngest 4.24.0 answers 401 {"message":"Unauthorized"}
      // (InngestCommHandler unauthorizedResponse), which a server treats as final (a 4xx, no X-Inngest-No-Retry).
      expect(res.status, `${SPEC}#L320-L331`).toBe(401);
      expect(JSON.parse(res.text)).toEqual({ message: "Unauthorized" });
      expect(res.headers.get("x-inngest-signature")).toBeNull();
    }
    expect(await deliveryState(tenantId)).toEqual(before);
    expect(consumer.received.length).toBe(received);
  });
});
