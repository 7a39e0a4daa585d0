// Rolling a subscription's secret: during the overlap every delivery verifies with the old secret
// and with the new one (stock Standard Webhooks verifier, and the hex HMAC headers); after it, only
// with the new one. Tested against a real consumer on 127.0.0.1 with the embedded engine.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { call, tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller } from "../helpers/webhooks";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { openDatabase } from "../../server/db/database";
import { runCli } from "../../server/cli/run-cli";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

let consumer: Consumer;
beforeAll(async () => {
  consumer = await startConsumer(200);
  await openDatabase();
  await startEmbeddedWorker({ pollIntervalMs: 100 });
});
afterAll(async () => {
  await stopEmbeddedWorker();
  await consumer.close();
});

const hex = (secret: string, raw: Buffer) => createHmac("sha256", secret).update(raw).digest("hex");
const verifies = (secret: string, req: Consumer["received"][number]) => {
  try {
    new Webhook(secret).verify(req.raw.toString("utf8"), req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

/** Creates an offering and returns the delivery the consumer received for it. */
async function deliveredFor(key: string, title: string) {
  const res = await call("POST", "/offerings", { key, body: { title, price: 1, price_currency: "USD" } });
  expect(res.status).toBe(201);
  return eventually(async () => consumer.received.find((r) => r.body?.data?.object?.id === res.body.id));
}

describe("webhook secret rotation", () => {
  it("both_secrets_verify_during_the_overlap_and_only_the_new_one_after", async () => {
    const { tenantId, key } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const sub = await owner.webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    const first = sub.secret;

    const before = await deliveredFor(key, "before the roll");
    expect(verifies(first, before)).toBe(true);
    expect(before.headers["x-webhook-signature"]).toBe(hex(first, before.raw));
    expect(before.headers["x-webhook-signature-previous"]).toBeUndefined();
    expect(String(before.headers["webhook-signature"]).split(" ")).toHaveLength(1);

    const rolled = await owner.webhooks.rollSecret({ id: sub.id, overlap_seconds: 3600 });
    const second = rolled.secret;
    expect(second).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(second).not.toBe(first);
    expect(rolled.secret_prefix).toBe(second.slice(0, 12));
    expect(Date.parse(rolled.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(3590_000);

    const during = await deliveredFor(key, "during the overlap");
    expect(verifies(second, during)).toBe(true);
    expect(verifies(first, during)).toBe(true);
    expect(during.headers["x-webhook-signature"]).toBe(hex(second, during.raw));
    expect(during.headers["x-webhook-signature-previous"]).toBe(hex(first, during.raw));

    // The overlap ends: the old secret stops signing.
    const db = (await openDatabase()).prisma;
    await db.webhookSubscription.update({ where: { id: sub.id }, data: { previousSecretExpiresAt: new Date(Date.now() - 1000) } });
    const after = await deliveredFor(key, "after the overlap");
    expect(verifies(second, after)).toBe(true);
    expect(verifies(first, after)).toBe(false);
    expect(after.headers["x-webhook-signature"]).toBe(hex(second, after.raw));
    expect(after.headers["x-webhook-signature-previous"]).toBeUndefined();
    const listed = await owner.webhooks.listSubscriptions({});
    expect(listed.data.find((s) => s.id === sub.id)?.previous_secret_expires_at).toBeNull();
  });

  it("a_roll_with_no_overlap_retires_the_old_secret_at_once_and_is_audited_without_secrets", async () => {
    const { tenantId, key } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const sub = await owner.webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    const rolled = await owner.webhooks.rollSecret({ id: sub.id, overlap_seconds: 0 });
    expect(rolled.previous_secret_expires_at).toBeNull();
    const req = await deliveredFor(key, "no overlap");
    expect(verifies(rolled.secret, req)).toBe(true);
    expect(verifies(sub.secret, req)).toBe(false);

    const audit = await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "webhook_subscription.secret_rolled" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toEqual({ previous_secret_prefix: sub.secret.slice(0, 12), secret_prefix: rolled.secret.slice(0, 12), overlap_seconds: 0 });
    expect(JSON.stringify(audit)).not.toContain(rolled.secret.slice(12));
    expect(JSON.stringify(audit)).not.toContain(sub.secret.slice(12));
  });

  it("403_a_member_cannot_roll_and_404_another_tenants_subscription", async () => {
    const a = await tenantWithKey();
    const b = await tenantWithKey();
    const sub = await dashboardCaller(a.tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    await expect(dashboardCaller(a.tenantId, "member").webhooks.rollSecret({ id: sub.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(dashboardCaller(b.tenantId).webhooks.rollSecret({ id: sub.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("cli_webhook_roll_secret_prints_the_new_secret_once_with_the_overlap", async () => {
    const { tenantId } = await tenantWithKey();
    const sub = await dashboardCaller(tenantId).webhooks.createSubscription({ url: consumer.url(), events: ["offering.created"] });
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
    let code: number;
    try {
      code = await runCli(["webhook", "roll-secret", sub.id], { "overlap-seconds": "60" });
    } finally {
      process.stdout.write = write;
    }
    expect(code).toBe(0);
    const printed = JSON.parse(out.join(""));
    expect(printed).toMatchObject({ id: sub.id, tenant_id: tenantId, secret: expect.stringMatching(/^whsec_[0-9a-f]{48}$/) });
    expect(Date.parse(printed.previous_secret_expires_at) - Date.now()).toBeGreaterThan(50_000);
  });
});
