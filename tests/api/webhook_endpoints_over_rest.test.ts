// /api/v1/webhook-endpoints: an integrator's key registers, lists, reads, changes, rolls and deletes
// its webhook endpoints through the dashboard's own service functions: the same URL checks and audit
// entries (the key as actor), `webhooks:write` for changes, `read` or `webhooks:write` for reads, and
// another tenant's endpoint answering exactly as a missing one. In-process, or over HTTP against a
// running mount (API_BASE_URL; its server runs with WEBHOOK_ALLOW_LOOPBACK=1, as this file sets here).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { dashboardCaller, call, errorOf, newKey, tenantWithKey } from "../helpers/api";

const MISSING = "00000000-0000-4000-8000-000000000000";
const NOT_FOUND = JSON.stringify(errorOf("not_found", "resource not found"));
const SECRET = /^whsec_[0-9a-f]{48}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A loopback consumer URL no one listens on: nothing here waits for a delivery. Unique per run (both mounts share one database). */
const hookUrl = (label: string) => `http://127.0.0.1:9/${label}-${randomUUID()}`;

const previousLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
beforeAll(() => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
});
afterAll(() => {
  if (previousLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = previousLoopback;
});

async function auditOf(tenantId: string) {
  const rows = await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows
    .filter((r) => r.action.startsWith("webhook_subscription."))
    .map(({ actorType, actorId, action, targetType, targetId, details }) => ({ actorType, actorId, action, targetType, targetId, details }));
}

async function created(key: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", "/webhook-endpoints", { key, body: { url: hookUrl("hook"), events: ["lead.created"], ...body } });
  expect(res.status, res.text).toBe(201);
  return res;
}

describe("/api/v1/webhook-endpoints", () => {
  it("201_create_shows_the_secret_once_and_get_and_list_never_show_it", async () => {
    const { tenantId, keyId, key } = await tenantWithKey(["webhooks:write"]);
    const url = hookUrl("create");
    const res = await call("POST", "/webhook-endpoints", { key, body: { url, events: ["lead.created", "booking.created"], description: "CRM sync" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      url,
      description: "CRM sync",
      events: ["lead.created", "booking.created"],
      enabled: true,
      max_deliveries_per_second: 50,
      secret_prefix: res.body.secret.slice(0, 12),
      previous_secret_expires_at: null,
      disabled_reason: null,
      disabled_at: null,
      circuit: "closed",
      failing_since: null,
      last_success_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      secret: expect.stringMatching(SECRET),
    });
    const { secret, ...endpoint } = res.body;

    const got = await call("GET", `/webhook-endpoints/${endpoint.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...endpoint, pending_deliveries: 0 });
    const listed = await call("GET", "/webhook-endpoints", { key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [endpoint], next_cursor: null, has_more: false });
    expect(got.text + listed.text).not.toContain(secret);

    expect(await auditOf(tenantId)).toEqual([
      {
        actorType: "api_key",
        actorId: keyId,
        action: "webhook_subscription.created",
        targetType: "webhook_subscription",
        targetId: endpoint.id,
        details: { url, events: ["lead.created", "booking.created"], enabled: true, max_deliveries_per_second: 50 },
      },
    ]);
  });

  it("list_pages_with_the_cursor_newest_first", async () => {
    const { key } = await tenantWithKey(["webhooks:write"]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await created(key)).body.id);
    const first = await call("GET", "/webhook-endpoints?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: ids[1] });
    const second = await call("GET", `/webhook-endpoints?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it("patch_changes_url_events_enabled_and_rate_and_audits_each_change_with_the_key", async () => {
    const { tenantId, keyId, key } = await tenantWithKey(["webhooks:write"]);
    const { secret, ...endpoint } = (await created(key)).body;
    const url = hookUrl("moved");
    const res = await call("PATCH", `/webhook-endpoints/${endpoint.id}`, {
      key,
      body: { url, events: ["booking.created"], enabled: false, max_deliveries_per_second: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...endpoint,
      url,
      events: ["booking.created"],
      enabled: false,
      max_deliveries_per_second: 5,
      updated_at: expect.stringMatching(ISO),
    });
    expect(res.text).not.toContain(secret);
    const changed = (await auditOf(tenantId)).at(-1);
    expect(changed).toEqual({
      actorType: "api_key",
      actorId: keyId,
      action: "webhook_subscription.changed",
      targetType: "webhook_subscription",
      targetId: endpoint.id,
      details: {
        changed: {
          url: { from: endpoint.url, to: url },
          events: { from: ["lead.created"], to: ["booking.created"] },
          enabled: { from: true, to: false },
          max_deliveries_per_second: { from: 50, to: 5 },
        },
      },
    });
  });

  it("roll_secret_issues_a_new_secret_once_and_keeps_the_old_one_signing_for_the_overlap", async () => {
    const { tenantId, keyId, key } = await tenantWithKey(["webhooks:write"]);
    const first = (await created(key)).body;
    const before = Date.now();
    const res = await call("POST", `/webhook-endpoints/${first.id}/roll-secret`, { key, body: { overlap_seconds: 3600 } });
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(SECRET);
    expect(res.body.secret).not.toBe(first.secret);
    expect(res.body.secret_prefix).toBe(res.body.secret.slice(0, 12));
    const expires = Date.parse(res.body.previous_secret_expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    const row = await (await openDatabase()).prisma.webhookSubscription.findUniqueOrThrow({ where: { id: first.id } });
    expect(row.previousSecretEncrypted).not.toBeNull();
    expect((await auditOf(tenantId)).at(-1)).toEqual({
      actorType: "api_key",
      actorId: keyId,
      action: "webhook_subscription.secret_rolled",
      targetType: "webhook_subscription",
      targetId: first.id,
      details: { previous_secret_prefix: first.secret_prefix, secret_prefix: res.body.secret_prefix, overlap_seconds: 3600 },
    });
    // 0 ends the old secret at once.
    const ended = await call("POST", `/webhook-endpoints/${first.id}/roll-secret`, { key, body: { overlap_seconds: 0 } });
    expect(ended.status).toBe(200);
    expect(ended.body.previous_secret_expires_at).toBeNull();
  });

  it("delete_answers_what_it_dropped_then_the_endpoint_is_a_404", async () => {
    const { tenantId, keyId, key } = await tenantWithKey(["webhooks:write"]);
    const endpoint = (await created(key)).body;
    const res = await call("DELETE", `/webhook-endpoints/${endpoint.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: endpoint.id, deleted: true, dropped_pending_deliveries: 0 });
    const gone = await call("GET", `/webhook-endpoints/${endpoint.id}`, { key });
    expect(gone.status).toBe(404);
    expect(gone.text).toBe(NOT_FOUND);
    const again = await call("DELETE", `/webhook-endpoints/${endpoint.id}`, { key });
    expect(again.status).toBe(404);
    expect(again.text).toBe(NOT_FOUND);
    expect((await auditOf(tenantId)).at(-1)).toEqual({
      actorType: "api_key",
      actorId: keyId,
      action: "webhook_subscription.deleted",
      targetType: "webhook_subscription",
      targetId: endpoint.id,
      details: { url: endpoint.url, events: ["lead.created"], dropped_pending_deliveries: 0 },
    });
  });

  it("403_changes_need_webhooks_write_and_reads_take_read_or_webhooks_write", async () => {
    const { tenantId, key: writer } = await tenantWithKey(["webhooks:write"]);
    const endpoint = (await created(writer)).body;
    const reader = (await newKey(tenantId, ["read"])).key;
    const other = (await newKey(tenantId, ["offerings:write", "crm:write"])).key;
    const needsWrite = JSON.stringify(errorOf("forbidden", "key missing required scope 'webhooks:write'"));
    const needsRead = JSON.stringify(errorOf("forbidden", "key missing required scope 'read' (or 'webhooks:write')"));

    for (const [method, path, body] of [
      ["POST", "/webhook-endpoints", { url: hookUrl("x"), events: ["lead.created"] }],
      ["PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: false }],
      ["POST", `/webhook-endpoints/${endpoint.id}/roll-secret`, {}],
      ["DELETE", `/webhook-endpoints/${endpoint.id}`, undefined],
    ] as const) {
      const res = await call(method, path, { key: reader, body });
      expect([method, path, res.status, res.text]).toEqual([method, path, 403, needsWrite]);
    }
    for (const path of ["/webhook-endpoints", `/webhook-endpoints/${endpoint.id}`]) {
      const refused = await call("GET", path, { key: other });
      expect([path, refused.status, refused.text]).toEqual([path, 403, needsRead]);
      expect((await call("GET", path, { key: reader })).status).toBe(200);
      expect((await call("GET", path, { key: writer })).status).toBe(200);
    }
    // Nothing the refused calls asked for happened.
    const after = await call("GET", `/webhook-endpoints/${endpoint.id}`, { key: reader });
    expect(after.body).toMatchObject({ enabled: true, secret_prefix: endpoint.secret_prefix });
  });

  it("404_another_tenants_endpoint_answers_the_bytes_of_a_missing_one_and_stays_as_it_was", async () => {
    const { key: theirKey } = await tenantWithKey(["webhooks:write"]);
    const theirs = (await created(theirKey)).body;
    const { key } = await tenantWithKey(["read", "webhooks:write"]);
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { enabled: false }],
      ["POST", "/roll-secret", { overlap_seconds: 0 }],
      ["DELETE", "", undefined],
    ] as const) {
      const theirAnswer = await call(method, `/webhook-endpoints/${theirs.id}${suffix}`, { key, body });
      const missing = await call(method, `/webhook-endpoints/${MISSING}${suffix}`, { key, body });
      expect([method, suffix, theirAnswer.status, theirAnswer.text]).toEqual([method, suffix, 404, NOT_FOUND]);
      expect(theirAnswer.text).toBe(missing.text);
    }
    const unchanged = await call("GET", `/webhook-endpoints/${theirs.id}`, { key: theirKey });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ enabled: true, secret_prefix: theirs.secret_prefix, previous_secret_expires_at: null });
    expect((await call("GET", "/webhook-endpoints", { key })).body.data).toEqual([]);
  });

  it("400_the_dashboards_url_and_field_checks_name_the_field", async () => {
    const { key } = await tenantWithKey(["webhooks:write"]);
    const refused = async (body: Record<string, unknown>) => {
      const res = await call("POST", "/webhook-endpoints", { key, body: { url: hookUrl("x"), events: ["lead.created"], ...body } });
      expect(res.status, res.text).toBe(400);
      return res.body.error.message as string;
    };
    // Loopback is allowed here (as on the test mounts): http elsewhere and private ranges say what is.
    expect(await refused({ url: "http://hooks.example.com/x" })).toBe(
      "invalid field 'url': must be an https URL (http is allowed for loopback hosts only: 127.0.0.1, ::1, localhost)",
    );
    expect(await refused({ url: "https://10.1.2.3/hook" })).toBe(
      "invalid field 'url': host 10.1.2.3 is a private address; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)",
    );
    expect(await refused({ events: [] })).toBe("invalid field 'events': must list at least one event");
    expect(await refused({ max_deliveries_per_second: 1001 })).toBe("invalid field 'max_deliveries_per_second': must be at most 1000");
    expect(await refused({ secret: "whsec_mine" })).toMatch(/secret/);
    const endpoint = (await created(key)).body;
    const empty = await call("PATCH", `/webhook-endpoints/${endpoint.id}`, { key, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(errorOf("bad_request", "request body must contain at least one updatable field"));
  });

  it.skipIf(!!process.env.API_BASE_URL)("400_a_loopback_url_says_how_to_allow_loopback_for_local_testing", async () => {
    const { key } = await tenantWithKey(["webhooks:write"]);
    process.env.WEBHOOK_ALLOW_LOOPBACK = "0";
    try {
      for (const url of ["http://127.0.0.1:4000/hook", "https://127.0.0.1/hook", "http://localhost:4000/hook"]) {
        const res = await call("POST", "/webhook-endpoints", { key, body: { url, events: ["lead.created"] } });
        expect([url, res.status]).toEqual([url, 400]);
        expect(res.body.error.message).toMatch(
          /^invalid field 'url': .*; to allow loopback targets \(http or https on 127\.0\.0\.1, ::1 or localhost\) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1$/,
        );
      }
    } finally {
      process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    }
  });

  it("idempotency_key_on_create_answers_the_first_201_again_and_registers_one_endpoint", async () => {
    const { key } = await tenantWithKey(["webhooks:write"]);
    const body = { url: hookUrl("idem"), events: ["lead.created"] };
    const headers = { "idempotency-key": randomUUID() };
    const first = await call("POST", "/webhook-endpoints", { key, body, headers });
    const again = await call("POST", "/webhook-endpoints", { key, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await call("GET", "/webhook-endpoints", { key })).body.data).toHaveLength(1);
  });

  it("an_endpoint_registered_over_rest_is_the_one_the_dashboard_shows", async () => {
    const { tenantId, key } = await tenantWithKey(["webhooks:write"]);
    const { secret: _secret, ...endpoint } = (await created(key)).body;
    const shown = await dashboardCaller(tenantId, "owner").webhooks.getSubscription({ id: endpoint.id });
    expect(shown).toEqual({ ...endpoint, pending_deliveries: 0 });
  });
});
