// The dashboard's handoff SLA setting (assistant.handoffSla / assistant.setHandoffSla) through the
// real /api/trpc handler with signed-in users: members read it, owners and admins change it within
// 1..10080 minutes, every change is audited with its old and new value, and tenants stay apart.
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { newTenant } from "../helpers/api";
import { sessionCookie, trpc, userInTenant } from "../helpers/dashboard";

const auditOf = async (tenantId: string) =>
  (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "tenant.handoff_sla_changed" }, orderBy: { createdAt: "asc" } });

describe("assistant.handoffSla in the dashboard", () => {
  let tenantA: string;
  let tenantB: string;
  let ownerA: string;
  let adminA: string;
  let memberA: string;
  let ownerB: string;

  beforeAll(async () => {
    tenantA = (await newTenant("Assistant A")).id;
    tenantB = (await newTenant("Assistant B")).id;
    ownerA = await sessionCookie(await userInTenant(tenantA, "owner"));
    adminA = await sessionCookie(await userInTenant(tenantA, "admin"));
    memberA = await sessionCookie(await userInTenant(tenantA, "member"));
    ownerB = await sessionCookie(await userInTenant(tenantB, "owner"));
  });

  it("an_owner_changes_it_a_member_reads_it_and_the_change_is_audited_with_from_and_to", async () => {
    expect((await trpc("query", "assistant.handoffSla", undefined, { cookie: memberA })).data).toEqual({ handoff_sla_minutes: 15 });
    const set = await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 45 }, { cookie: ownerA });
    expect(set.status).toBe(200);
    expect(set.data).toEqual({ handoff_sla_minutes: 45 });
    const read = await trpc("query", "assistant.handoffSla", undefined, { cookie: memberA });
    expect(read.status).toBe(200);
    expect(read.data).toEqual({ handoff_sla_minutes: 45 });
    const byAdmin = await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 30 }, { cookie: adminA });
    expect(byAdmin.data).toEqual({ handoff_sla_minutes: 30 });

    const audit = await auditOf(tenantA);
    expect(audit.map((e) => [e.actorType, e.actorLabel?.split("-")[0], e.targetType, e.targetId, e.details])).toEqual([
      ["user", "owner", "tenant", tenantA, { from: 15, to: 45 }],
      ["user", "admin", "tenant", tenantA, { from: 45, to: 30 }],
    ]);
    // The same value again changes nothing and is not audited.
    expect((await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 30 }, { cookie: ownerA })).data).toEqual({ handoff_sla_minutes: 30 });
    expect(await auditOf(tenantA)).toHaveLength(2);
    // Another tenant's setting is its own.
    expect((await trpc("query", "assistant.handoffSla", undefined, { cookie: ownerB })).data).toEqual({ handoff_sla_minutes: 15 });
  });

  it("a_member_cannot_change_it_403_naming_the_role_and_nothing_changes", async () => {
    const before = (await trpc("query", "assistant.handoffSla", undefined, { cookie: memberA })).data;
    const refused = await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 5 }, { cookie: memberA });
    expect(refused.status).toBe(403);
    expect(refused.error?.message).toBe("role 'member' cannot make changes; an owner or admin can");
    expect((await trpc("query", "assistant.handoffSla", undefined, { cookie: memberA })).data).toEqual(before);
  });

  it("values_outside_1_to_10080_or_not_integers_are_400_naming_the_field", async () => {
    const before = (await auditOf(tenantA)).length;
    for (const bad of [0, -1, 10_081, 2.5, "30", null]) {
      const res = await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: bad }, { cookie: ownerA });
      expect(res.status).toBe(400);
      expect(res.error?.message).toBe("invalid field 'handoff_sla_minutes': must be an integer from 1 to 10080");
      expect(res.error?.data.field).toBe("handoff_sla_minutes");
    }
    const extra = await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 20, tenant_id: tenantB }, { cookie: ownerA });
    expect(extra.status).toBe(400);
    expect(await auditOf(tenantA)).toHaveLength(before);
    expect((await trpc("query", "assistant.handoffSla", undefined, { cookie: ownerB })).data).toEqual({ handoff_sla_minutes: 15 });
  });

  it("members_read_the_list_of_tools_with_the_scope_each_needs", async () => {
    const res = await trpc("query", "assistant.tools", undefined, { cookie: memberA });
    expect(res.status).toBe(200);
    expect(res.data.map((t: { name: string }) => t.name)).toEqual([
      "search_offerings",
      "get_conversation_context",
      "upsert_lead",
      "book_appointment",
      "reschedule_appointment",
      "cancel_appointment",
      "request_handoff",
      "record_csat",
    ]);
    expect(res.data.find((t: { name: string }) => t.name === "search_offerings")).toEqual({
      name: "search_offerings",
      title: expect.any(String),
      kind: "read",
      required_scope: "assistant:read",
    });
    expect(res.data.find((t: { name: string }) => t.name === "book_appointment")).toMatchObject({ kind: "write", required_scope: "appointments:write" });
  });

  it("signed_out_is_401", async () => {
    expect((await trpc("query", "assistant.handoffSla", undefined, {})).status).toBe(401);
    expect((await trpc("mutation", "assistant.setHandoffSla", { handoff_sla_minutes: 20 }, {})).status).toBe(401);
  });
});
