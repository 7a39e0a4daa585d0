// A tenant's export, on both databases: every row of every exported resource is in it (ids and
// counts checked against the database), in keyset pages (a page size of 7 across hundreds of rows,
// many with the same created_at), nothing of another tenant appears, and no secret leaves (key
// hashes and salts, webhook secrets, CRM and channel credentials, invitation hashes). The owner's
// download streams the same lines; other roles and strangers are refused.
import { mkdtempSync, readFileSync, createWriteStream } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../../server/db/database";
import { EXPORT_RESOURCES, NOT_EXPORTED, openTenantExport } from "../../server/export/export";
import { writeExport } from "../../server/export/export.cli";
import { answerExportDownload } from "../../server/export/export-download";
import { TENANT_MODELS } from "../../server/db/tenant-scope";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { call, dashboardCaller, tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { ORIGIN, sessionCookie, userInTenant } from "../helpers/dashboard";
import { seedCustomer, subscribeToEverything, uniqueCustomer } from "../erasure/seed-customer";

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

type Line = { resource: string; data: Record<string, any> };
const parse = (text: string): Line[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** A tenant with rows in every exported table, and the secrets it was given. */
async function seededTenant() {
  const t = await tenantWithKey();
  const sub = await subscribeToEverything(t.tenantId, consumer.url(`/${t.tenantId}`));
  await seedCustomer(t.tenantId, t.key, uniqueCustomer());
  await seedCustomer(t.tenantId, t.key, uniqueCustomer());
  const offering = await call("POST", "/offerings", { key: t.key, body: { title: "Villa", price: 100, price_currency: "USD" } });
  expect(offering.status).toBe(201);
  const db = (await openDatabase()).prisma;
  // Many rows with one created_at: the keyset must break ties by id.
  const conversation = await db.conversation.findFirstOrThrow({ where: { tenantId: t.tenantId } });
  const at = new Date();
  await db.message.createMany({
    data: Array.from({ length: 230 }, (_, i) => ({
      tenantId: t.tenantId,
      conversationId: conversation.id,
      direction: "outbound",
      author: "operator",
      body: `bulk ${i}`,
      status: "sent",
      createdAt: at,
    })),
  });
  await db.crmConnection.create({
    data: { tenantId: t.tenantId, provider: "http", baseUrl: "https://crm.example.com", credentialsEncrypted: "CRM-SECRET-CIPHERTEXT" },
  });
  await db.channelConnection.create({
    data: {
      tenantId: t.tenantId,
      provider: "twilio",
      channel: "sms",
      address: `+9714${String(Date.now()).slice(-7)}`,
      credentialsEncrypted: "CHANNEL-SECRET-CIPHERTEXT",
    },
  });
  await eventually(async () => (await db.webhookDelivery.count({ where: { tenantId: t.tenantId, status: "pending" } })) === 0, 15_000);
  return { ...t, webhookSecret: sub.secret as string };
}

const delegate = (model: string) => (prisma as any)[model.charAt(0).toLowerCase() + model.slice(1)];
let prisma: Db;

/** The tenant's rows of every exported resource, by resource: ids (or the composite key of the analytics counts). */
async function rowsInDatabase(tenantId: string): Promise<Record<string, string[]>> {
  prisma = (await openDatabase()).prisma;
  const out: Record<string, string[]> = {};
  for (const r of EXPORT_RESOURCES) {
    const where = { [r.tenantField ?? "tenantId"]: tenantId };
    const rows: any[] = await delegate(r.model).findMany({ where });
    out[r.name] = rows.map((row) => row.id ?? `${row.day.toISOString().slice(0, 10)}|${row.metric}|${row.shard}`).sort();
  }
  return out;
}

function rowsInExport(lines: Line[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { resource, data } of lines.slice(2, -1)) {
    (out[resource] ??= []).push(data.id ?? `${String(data.day).slice(0, 10)}|${data.metric}|${data.shard}`);
  }
  for (const ids of Object.values(out)) ids.sort();
  return out;
}

describe("tenant export", () => {
  it("every_row_of_the_tenant_is_exported_once_in_keyset_pages_and_nothing_of_another_tenant_or_any_secret", async () => {
    const mine = await seededTenant();
    const theirs = await seededTenant();

    const dir = mkdtempSync(path.join(tmpdir(), "tenant-export-"));
    const file = path.join(dir, "export.jsonl");
    const out = createWriteStream(file);
    const counts = await writeExport((await openTenantExport(mine.tenantId, { pageSize: 7 }))!, out);
    out.end();
    await once(out, "finish");
    const text = readFileSync(file, "utf8");
    const lines = parse(text);

    expect(lines[0]).toEqual({ resource: "export", data: { format: "tenant-export", version: 1, tenant_id: mine.tenantId, exported_at: expect.any(String) } });
    expect(lines[1]).toMatchObject({ resource: "tenants", data: { id: mine.tenantId } });
    expect(lines.at(-1)).toEqual({ resource: "export_end", data: { counts } });

    const expected = await rowsInDatabase(mine.tenantId);
    const exported = rowsInExport(lines);
    for (const r of EXPORT_RESOURCES) {
      expect(exported[r.name] ?? [], r.name).toEqual(expected[r.name]);
      expect(counts[r.name], r.name).toBe(expected[r.name].length);
    }
    // The resources come one after the other, each once, in the documented order.
    const order = lines
      .slice(1, -1)
      .map((l) => l.resource)
      .filter((r, i, all) => r !== all[i - 1]);
    expect(order).toEqual(["tenants", ...EXPORT_RESOURCES.map((r) => r.name).filter((n) => expected[n].length > 0)]);
    // Rows in every table that has any: the seed reached them (the test would prove nothing otherwise).
    for (const name of ["api_keys", "audit_logs", "offerings", "conversations", "messages", "calls", "leads", "appointments", "csat_responses", "events"])
      expect(expected[name].length, name).toBeGreaterThan(0);
    for (const name of [
      "webhook_subscriptions",
      "webhook_deliveries",
      "webhook_attempts",
      "notifications",
      "crm_connections",
      "channel_connections",
      "tool_calls",
    ])
      expect(expected[name].length, name).toBeGreaterThan(0);
    expect(expected.messages.length).toBeGreaterThan(230);
    // Every table with a tenant column is exported, or left out with a reason.
    const covered = new Set<string>([...EXPORT_RESOURCES.map((r) => r.model), ...Object.keys(NOT_EXPORTED)]);
    expect([...TENANT_MODELS].filter((m) => !covered.has(m))).toEqual([]);

    // Nothing of the other tenant; no secret.
    expect(text).not.toContain(theirs.tenantId);
    for (const secret of [mine.key, mine.webhookSecret, "CRM-SECRET-CIPHERTEXT", "CHANNEL-SECRET-CIPHERTEXT"]) expect(text).not.toContain(secret);
    const key = await (await openDatabase()).prisma.apiKey.findFirstOrThrow({ where: { tenantId: mine.tenantId } });
    const subscription = await (await openDatabase()).prisma.webhookSubscription.findFirstOrThrow({ where: { tenantId: mine.tenantId } });
    for (const stored of [key.hash, key.salt, subscription.secretEncrypted]) expect(text).not.toContain(stored);
    for (const field of ["hash", "salt", "secret_encrypted", "previous_secret_encrypted", "credentials_encrypted", "secret_hash"])
      expect(lines.filter((l) => field in l.data).map((l) => l.resource)).toEqual([]);
  }, 120_000);

  it("the_owner_downloads_the_export_and_admins_members_and_strangers_are_refused", async () => {
    const t = await tenantWithKey();
    await dashboardCaller(t.tenantId).offerings.create({ title: "Loft", price: 5, price_currency: "USD" });
    const owner = await sessionCookie(await userInTenant(t.tenantId, "owner"));
    const admin = await sessionCookie(await userInTenant(t.tenantId, "admin"));
    const get = (cookie?: string) =>
      answerExportDownload(new Request(`${ORIGIN}/api/dashboard/export`, { headers: cookie ? { cookie, host: "127.0.0.1:3000" } : {} }));

    const res = await get(owner);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="tenant-export-\d{4}-\d{2}-\d{2}\.jsonl"$/);
    const lines = parse(await res.text());
    expect(lines[0].data.tenant_id).toBe(t.tenantId);
    expect(lines.filter((l) => l.resource === "offerings")).toHaveLength(1);
    expect(lines.at(-1)?.resource).toBe("export_end");
    const audit = await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId: t.tenantId, action: "tenant.exported" } });
    expect(audit.map((a) => [a.actorType, a.details])).toEqual([["user", { via: "dashboard" }]]);

    const refused = await get(admin);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: { code: "forbidden", message: "role 'admin' cannot export the tenant; an owner can" } });
    const stranger = await get();
    expect(stranger.status).toBe(401);
  }, 60_000);
});
