// Subscription management through the dashboard procedures: secrets shown once and stored
// encrypted, target URL rules, roles, audit entries, and the test event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { toAppError } from "../../server/lib/errors";
import { decryptSecret } from "../../server/crypto/secret-box";
import { tenantWithKey } from "../helpers/api";
import { dashboardCaller, deliveriesOf } from "../helpers/webhooks";
import { startConsumer, eventually, type Consumer } from "../helpers/webhook-consumer";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { refusedAddressReason } from "../../server/lib/target-url";
import { DEFAULT_RETRY_DELAYS_MS, classifyOutcome, nextStep } from "../../server/webhooks/retry-ladder";

let c: Consumer;
beforeAll(async () => {
  c = await startConsumer(200);
  await openDatabase();
  await startEmbeddedWorker({ pollIntervalMs: 100 });
});
afterAll(async () => {
  await stopEmbeddedWorker();
  await c.close();
});

describe("webhook subscriptions", () => {
  it("shows the secret once, stores it encrypted, and audits create/change/delete", async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const created = await owner.webhooks.createSubscription({ url: c.url(), events: ["lead.created", "booking.created"] });
    expect(created.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(created.secret_prefix).toBe(created.secret.slice(0, 12));
    const row = await (await openDatabase()).prisma.webhookSubscription.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secretEncrypted).not.toContain(created.secret.slice(6));
    expect(decryptSecret(row.secretEncrypted)).toBe(created.secret);

    const list = await owner.webhooks.listSubscriptions({});
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).not.toHaveProperty("secret");
    expect(JSON.stringify(list)).not.toContain(created.secret);

    const changed = await owner.webhooks.updateSubscription({ id: created.id, events: ["lead.created"], enabled: false });
    expect(changed).toMatchObject({ events: ["lead.created"], enabled: false });
    await owner.webhooks.deleteSubscription({ id: created.id });
    const audit = await (await openDatabase()).prisma.auditLog.findMany({
      where: { tenantId, targetType: "webhook_subscription" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual(["webhook_subscription.created", "webhook_subscription.changed", "webhook_subscription.deleted"]);
    expect(JSON.stringify(audit)).not.toContain(created.secret);
    await expect(owner.webhooks.deleteSubscription({ id: created.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("lets members read but not change", async () => {
    const { tenantId } = await tenantWithKey();
    const member = dashboardCaller(tenantId, "member");
    await expect(member.webhooks.listSubscriptions({})).resolves.toMatchObject({ data: [] });
    await expect(member.webhooks.createSubscription({ url: c.url(), events: ["lead.created"] })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses non-https and internal targets, naming the field", async () => {
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const refused = async (url: string, allowLoopback = "0") => {
      process.env.WEBHOOK_ALLOW_LOOPBACK = allowLoopback;
      try {
        await owner.webhooks.createSubscription({ url, events: ["lead.created"] });
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      } finally {
        process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
      }
    };
    expect(await refused("http://example.com/hook")).toBe(
      "invalid field 'url': must be an https URL; to allow loopback targets (http or https on 127.0.0.1, ::1 or localhost) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1",
    );
    expect(await refused("http://example.com/hook", "1")).toBe(
      "invalid field 'url': must be an https URL (http is allowed for loopback hosts only: 127.0.0.1, ::1, localhost)",
    );
    expect(await refused("https://10.1.2.3/hook")).toBe(
      "invalid field 'url': host 10.1.2.3 is a private address; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)",
    );
    expect(await refused("https://169.254.169.254/latest")).toBe(
      "invalid field 'url': host 169.254.169.254 is a linkLocal address; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)",
    );
    expect(await refused("https://100.64.0.1/")).toBe(
      "invalid field 'url': host 100.64.0.1 is a carrierGradeNat address; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)",
    );
    expect(await refused("https://[::ffff:127.0.0.1]/")).toBe(
      "invalid field 'url': host ::ffff:7f00:1 is a loopback address; to allow loopback targets (http or https on 127.0.0.1, ::1 or localhost) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1",
    );
    expect(await refused("https://localhost/hook")).toMatch(
      /^invalid field 'url': host localhost resolves to .*, which is a loopback address; to allow loopback targets .* WEBHOOK_ALLOW_LOOPBACK=1$/,
    );
    expect(await refused(c.url())).toBe(
      "invalid field 'url': must be an https URL; to allow loopback targets (http or https on 127.0.0.1, ::1 or localhost) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1",
    );
    expect(await refused(c.url(), "1")).toBe("accepted");
    expect(await refused("https://8.8.8.8/hook")).toBe("accepted");
    expect(refusedAddressReason("fd00:ec2::254", false)).toBe("is a uniqueLocal address");
    const bad = await owner.webhooks.createSubscription({ url: c.url(), events: ["lead.nope" as never] }).catch((e) => toAppError(e));
    expect(bad).toMatchObject({ errorCode: "bad_request", field: "events[0]" });
    expect((bad as Error).message).toMatch(/^invalid field 'events\[0\]': must be one of: lead.created, /);
  });

  it("sends a test event to the one subscription and records it", async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const one = await owner.webhooks.createSubscription({ url: c.url("/one"), events: ["lead.created"] });
    await owner.webhooks.createSubscription({ url: c.url("/two"), events: ["lead.created"] });
    const before = c.received.length;
    const delivery = await owner.webhooks.sendTestEvent({ subscription_id: one.id });
    expect(delivery).toMatchObject({ subscription_id: one.id, event_type: "webhook.test", status: "pending" });
    await eventually(async () => (await deliveriesOf(tenantId, one.id))[0]?.status === "delivered");
    expect(c.received.slice(before).map((r) => [r.path, r.body.event, r.body.data.object.subscription_id])).toEqual([["/one", "webhook.test", one.id]]);
  });

  it("keeps the specification's ladder and outcome rules as defaults", () => {
    expect(DEFAULT_RETRY_DELAYS_MS).toEqual([0, 60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect([200, 204, 301, 400, 410, 429, 500, 503, null].map(classifyOutcome)).toEqual([
      "delivered",
      "delivered",
      "permanent_fail",
      "permanent_fail",
      "permanent_fail",
      "permanent_fail",
      "retry",
      "retry",
      "retry",
    ]);
    expect(nextStep(1, "retry", DEFAULT_RETRY_DELAYS_MS)).toEqual({ status: "pending", nextDelayMs: 60_000 });
    expect(nextStep(5, "retry", DEFAULT_RETRY_DELAYS_MS)).toEqual({ status: "pending", nextDelayMs: 43_200_000 });
    expect(nextStep(6, "retry", DEFAULT_RETRY_DELAYS_MS)).toEqual({ status: "dead_letter", nextDelayMs: null });
  });
});
