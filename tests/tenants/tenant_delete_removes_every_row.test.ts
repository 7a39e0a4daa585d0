// `tenant delete`: after its grace period (or at once with --now) every row of the tenant is deleted,
// in batches, in every table that has a tenant column (found in the catalog, not from a list in the
// code), while another tenant's rows stay exactly as they were and its API keeps answering; an
// interrupted deletion continues where it stopped.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { connectChannel } from "../../server/channels/channel-connections";
import { OPERATOR } from "../../server/audit/record-audit";
import { UsageError } from "../../server/lib/cli";
import { MESSAGES } from "../../server/lib/errors";
import { deleteTenantData, scheduleTenantDeletion } from "../../server/tenants/lifecycle";
import { TENANT_COMMANDS } from "../../server/tenants/tenants.cli";
import { call, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { sessionCookie, userInTenant } from "../helpers/dashboard";
import { makeConversation, uniquePhone } from "../helpers/conversations";
import { TWILIO_SID, uniqueBusinessNumber } from "../channels/fixtures";
import { seedAged, subscriptionRow } from "../retention/seed";

/** Every (table, column) naming a tenant, read from the catalog here (independently of the code under test). */
async function tenantColumns() {
  return (await openDatabase()).prisma.$queryRawUnsafe<{ table_name: string; column_name: string }[]>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name IN ('tenant_id', 'organization_id', 'active_organization_id') ORDER BY 1, 2`,
  );
}

/** Rows of `tenantId` in each of those tables (tables with none are left out). */
async function rowsOf(tenantId: string) {
  const db = (await openDatabase()).prisma;
  const counts: Record<string, number> = {};
  for (const { table_name, column_name } of await tenantColumns()) {
    const [{ n }] = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${table_name}" WHERE "${column_name}"::text = $1`, tenantId);
    if (n) counts[`${table_name}.${column_name}`] = n;
  }
  const tenants = await db.tenant.count({ where: { id: tenantId } });
  if (tenants) counts.tenants = tenants;
  return counts;
}

/** A tenant with rows in every table that can hold one, made through the API, the tools and the services. */
async function seededTenant() {
  const t = await tenantWithKey();
  const db = scopeToTenant((await openDatabase()).prisma, t.tenantId);
  await connectChannel(
    db,
    { provider: "twilio", channel: "sms", address: uniqueBusinessNumber(), credentials: { account_sid: TWILIO_SID, auth_token: "token-of-a-tenant" } },
    OPERATOR,
  );
  await (await openDatabase()).prisma.crmConnection.create({
    data: { tenantId: t.tenantId, provider: "http", baseUrl: "https://crm.example", credentialsEncrypted: "x" },
  });
  const owner = await userInTenant(t.tenantId, "owner");
  await sessionCookie(owner); // a signed-in session whose active tenant is this one
  await (await openDatabase()).prisma.invitation.create({
    data: {
      id: crypto.randomUUID(),
      organizationId: t.tenantId,
      email: "invitee@example.test",
      role: "member",
      status: "pending",
      expiresAt: new Date(Date.now() + 86_400_000),
      inviterId: (await (await openDatabase()).prisma.user.findFirstOrThrow({ where: { email: owner } })).id,
    },
  });
  const offering = await call("POST", "/offerings", {
    key: t.key,
    body: { title: "Villa", price: 10, price_currency: "USD" },
    headers: { "idempotency-key": "seed-1" },
  });
  expect(offering.status).toBe(201);
  const conversation = await makeConversation(t.tenantId);
  const lead = await call("POST", "/leads", { key: t.key, body: { conversation_id: conversation.id, offering_id: offering.body.id } });
  expect(lead.status).toBe(201);
  const appointment = await call("POST", "/appointments", {
    key: t.key,
    body: {
      customer_name: "Layla",
      customer_phone: uniquePhone(),
      scheduled_start: "2030-01-01T10:00:00.000Z",
      scheduled_end: "2030-01-01T11:00:00.000Z",
      conversation_id: conversation.id,
      lead_id: lead.body.id,
      offering_id: offering.body.id,
    },
  });
  expect(appointment.status).toBe(201);
  expect((await callTool(t.key, "record_csat", { conversation_id: conversation.id, score: 4, tool_call_id: "seed-csat" })).status).toBe(200);
  const sub = await subscriptionRow(t.tenantId);
  await seedAged(t.tenantId, [3, 1], { subscriptionId: sub.id });
  await (await openDatabase()).prisma.notification.create({ data: { tenantId: t.tenantId, kind: "test", title: "t", body: "b" } });
  return t;
}

describe("tenant delete", () => {
  it("removes_every_row_of_the_tenant_in_every_tenant_table_and_leaves_the_other_tenant_s_rows_intact", async () => {
    const a = await seededTenant();
    const b = await seededTenant();
    const beforeA = await rowsOf(a.tenantId);
    const beforeB = await rowsOf(b.tenantId);
    // Seeded in every table but the ones only the operator's rate limiter or better-auth's own stores use.
    expect(Object.keys(beforeA).sort()).toEqual(Object.keys(beforeB).sort());
    for (const table of [
      "api_keys",
      "audit_logs",
      "analytics_daily_counts",
      "appointments",
      "calls",
      "channel_connections",
      "conversations",
      "crm_connections",
      "csat_responses",
      "events",
      "idempotent_responses",
      "invitations",
      "leads",
      "members",
      "messages",
      "notifications",
      "offerings",
      "tool_calls",
      "webhook_attempts",
      "webhook_deliveries",
      "webhook_subscriptions",
    ]) {
      expect(Object.keys(beforeA).some((k) => k.startsWith(`${table}.`))).toBe(true);
    }
    expect(beforeA["sessions.active_organization_id"]).toBe(1);

    // Scheduled with a grace period: suspended now, nothing deleted yet, and not deletable before it ends.
    const scheduled = await scheduleTenantDeletion(a.tenantId);
    expect(scheduled).toMatchObject({ status: "deletion_scheduled", suspended_at: expect.any(String) });
    expect(new Date(scheduled.delete_after!).getTime()).toBeGreaterThan(Date.now() + 71 * 3_600_000);
    const refused = await call("GET", "/offerings", { key: a.key });
    expect([refused.status, refused.body]).toEqual([403, { error: { code: "forbidden", message: MESSAGES.tenantSuspended } }]);
    await expect(deleteTenantData(a.tenantId)).rejects.toThrow(UsageError);
    expect(await rowsOf(a.tenantId)).toEqual({ ...beforeA, "audit_logs.tenant_id": beforeA["audit_logs.tenant_id"] + 1 }); // + tenant.deletion_scheduled

    // --now: due at once. Interrupted after 4 batches of 2 rows, then continued to the end; B keeps working meanwhile.
    await scheduleTenantDeletion(a.tenantId, { now: true });
    let batches = 0;
    const partial = await deleteTenantData(a.tenantId, { batch: 2, pauseMs: 0, shouldStop: () => batches++ >= 4 });
    expect(partial.done).toBe(false);
    // 4 batches: the channel connection, the key, the membership and the invitation (what lets anything in goes first)
    expect(partial.deleted).toEqual({ channel_connections: 1, api_keys: 1, members: 1, invitations: 1 });
    expect(Object.keys(await rowsOf(a.tenantId))).toContain("messages.tenant_id");
    const [done, ...bAnswers] = await Promise.all([
      TENANT_COMMANDS["tenant delete"]([a.tenantId], { now: true }),
      ...Array.from({ length: 5 }, (_, i) => call("POST", "/offerings", { key: b.key, body: { title: `B ${i}`, price: 1, price_currency: "USD" } })),
    ]);
    expect(done).toMatchObject({ id: a.tenantId, status: "deleted" });
    expect(bAnswers.map((r) => (r as { status: number }).status)).toEqual([201, 201, 201, 201, 201]);

    // Not one row of A anywhere; B exactly as before (plus its 5 new offerings, their events and deliveries).
    expect(await rowsOf(a.tenantId)).toEqual({});
    const afterB = await rowsOf(b.tenantId);
    const newRows = { "offerings.tenant_id": 5, "events.tenant_id": 5, "webhook_deliveries.tenant_id": 5 }; // its subscription takes offering.created
    expect(afterB).toEqual({ ...beforeB, ...Object.fromEntries(Object.entries(newRows).map(([k, n]) => [k, beforeB[k] + n])) });
    // Deleting again: nothing left to do.
    await expect(TENANT_COMMANDS["tenant delete"]([a.tenantId], { now: true })).rejects.toThrow(new UsageError(`tenant ${a.tenantId} not found`));
  });

  it("resume_during_the_grace_period_cancels_the_deletion", async () => {
    const t = await tenantWithKey();
    await TENANT_COMMANDS["tenant delete"]([t.tenantId], {});
    expect((await call("GET", "/offerings", { key: t.key })).status).toBe(403);
    expect(await TENANT_COMMANDS["tenant resume"]([t.tenantId], {})).toMatchObject({ status: "active", delete_after: null });
    expect((await call("GET", "/offerings", { key: t.key })).status).toBe(200);
    const list = (await TENANT_COMMANDS["tenant list"]([], {})) as { id: string; status: string; api_keys: number; rows: Record<string, number> }[];
    expect(list.find((x) => x.id === t.tenantId)).toMatchObject({ status: "active", api_keys: 1, rows: { api_keys: 1, audit_logs: 3 } });
    // Once due, it cannot be resumed.
    await TENANT_COMMANDS["tenant delete"]([t.tenantId], { now: true });
    await expect(TENANT_COMMANDS["tenant resume"]([t.tenantId], {})).rejects.toThrow(UsageError);
  });
});
