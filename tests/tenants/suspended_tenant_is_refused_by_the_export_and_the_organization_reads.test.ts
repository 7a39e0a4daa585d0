// Issue 43: after `tenant suspend`, the owner's `GET /api/dashboard/export` still answered 200 with the
// whole export, and better-auth's organization reads (list-members, get-full-organization, ...) still
// answered with the members' addresses and the invitations. Suspension refuses every surface but the
// receivers: these now answer the refusal the dashboard's procedures give (403 "tenant suspended"), and
// answer again once the tenant is resumed. A user who belongs to another tenant can still switch to it.
// Reads of a tenant the user does not belong to are refused before better-auth runs (it would first
// clear the session's active tenant).
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { getAuth } from "../../server/dashboard/auth";
import { answerExportDownload } from "../../server/export/export-download";
import { NOT_A_MEMBER_MESSAGE } from "../../server/dashboard/organization-endpoints";
import { addMember } from "../../server/dashboard/users";
import { MESSAGES } from "../../server/lib/errors";
import { resumeTenant, suspendTenant } from "../../server/tenants/lifecycle";
import { newTenant } from "../helpers/api";
import { ORIGIN, sessionCookie, trpc, userInTenant } from "../helpers/dashboard";
import { answerOf, type HttpAnswer } from "../dashboard/http-session";

const SUSPENDED = { error: { code: "forbidden", message: MESSAGES.tenantSuspended } };
const NOT_A_MEMBER = { error: { code: "forbidden", message: NOT_A_MEMBER_MESSAGE } };

async function auth(cookie: string, path: string, body?: unknown): Promise<HttpAnswer> {
  const headers = { cookie, origin: ORIGIN, host: new URL(ORIGIN).host, "content-type": "application/json" };
  const init = body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) };
  return answerOf(await (await getAuth()).handler(new Request(`${ORIGIN}/api/auth${path}`, init)));
}

const exportAs = async (cookie: string) =>
  answerOf(await answerExportDownload(new Request(`${ORIGIN}/api/dashboard/export`, { headers: { cookie, host: "127.0.0.1:3000" } })));
const exportsAudited = async (tenantId: string) => (await getDb()).auditLog.count({ where: { tenantId, action: "tenant.exported" } });

describe("a suspended tenant on the dashboard's other surfaces", () => {
  let suspended: { id: string; slug: string };
  let other: { id: string };
  let stranger: { id: string };
  let owner: string;
  let cookie: string;

  beforeAll(async () => {
    suspended = await newTenant("Suspended on the dashboard");
    other = await newTenant("Another tenant of the owner");
    stranger = await newTenant("Not the owner's");
    owner = await userInTenant(suspended.id, "owner"); // the first membership: the session's active tenant
    await addMember({ tenantId: other.id, email: owner, role: "member" });
    await userInTenant(suspended.id, "member");
    cookie = await sessionCookie(owner);
    const invited = await trpc(
      "mutation",
      "dashboard.members.invite",
      { email: `invited-${suspended.id.slice(0, 8)}@example.test`, role: "member" },
      { cookie },
    );
    expect(invited.status).toBe(200);
  });

  /** Every read of the suspended tenant: the session's active one, or named by id or slug, in the query or the body. */
  const reads = () =>
    [
      ["/organization/get-full-organization", undefined],
      [`/organization/get-full-organization?organizationId=${suspended.id}`, undefined],
      [`/organization/get-full-organization?organizationSlug=${suspended.slug}`, undefined],
      ["/organization/get-organization", undefined],
      ["/organization/list-members", undefined],
      [`/organization/list-members?organizationSlug=${suspended.slug}`, undefined],
      ["/organization/list-invitations", undefined],
      ["/organization/get-active-member", undefined],
      ["/organization/get-active-member-role", undefined],
      ["/organization/has-permission", { permissions: { member: ["create"] } }],
      ["/organization/set-active", { organizationId: suspended.id }],
    ] as [string, unknown][];

  it("the_export_and_every_organization_read_answer_403_tenant_suspended_and_again_once_resumed", async () => {
    // Before: the export and the reads answer (members' addresses, the pending invitation).
    expect((await exportAs(cookie)).status).toBe(200);
    const full = await auth(cookie, "/organization/get-full-organization");
    expect(full.status).toBe(200);
    expect(full.body.members.map((m: { user: { email: string } }) => m.user.email)).toContain(owner);
    expect(full.body.invitations).toHaveLength(1);
    for (const [path, body] of reads()) expect({ path, status: (await auth(cookie, path, body)).status }).toEqual({ path, status: 200 });
    const audited = await exportsAudited(suspended.id);

    await suspendTenant(suspended.id, "unpaid invoice");

    const refused = await exportAs(cookie);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: SUSPENDED });
    expect(await exportsAudited(suspended.id)).toBe(audited); // nothing was exported
    for (const [path, body] of reads()) {
      const answer = await auth(cookie, path, body);
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 403, body: SUSPENDED });
    }
    // The same refusal as the dashboard's procedures.
    const me = await trpc("query", "dashboard.me", undefined, { cookie });
    expect([me.status, me.error?.message]).toEqual([403, MESSAGES.tenantSuspended]);

    await resumeTenant(suspended.id);
    expect((await exportAs(cookie)).status).toBe(200);
    for (const [path, body] of reads()) expect({ path, status: (await auth(cookie, path, body)).status }).toEqual({ path, status: 200 });
  });

  it("a_member_of_another_tenant_switches_to_it_and_reads_it_while_the_suspended_one_stays_refused", async () => {
    await suspendTenant(suspended.id);
    try {
      const switched = await auth(cookie, "/organization/set-active", { organizationId: other.id });
      expect(switched.status).toBe(200);
      expect(switched.body).toMatchObject({ id: other.id });
      expect((await auth(cookie, "/organization/get-full-organization")).body).toMatchObject({ id: other.id });
      expect((await auth(cookie, "/organization/list")).status).toBe(200);
      const named = await auth(cookie, `/organization/list-members?organizationId=${suspended.id}`);
      expect({ status: named.status, body: named.body }).toEqual({ status: 403, body: SUSPENDED });
      expect((await trpc("query", "dashboard.me", undefined, { cookie })).data).toMatchObject({ tenant: { id: other.id } });
    } finally {
      await resumeTenant(suspended.id);
      await auth(cookie, "/organization/set-active", { organizationId: suspended.id });
    }
  });

  it("a_read_of_a_tenant_the_user_does_not_belong_to_is_refused_and_the_session_keeps_its_tenant", async () => {
    for (const path of [
      `/organization/get-full-organization?organizationId=${stranger.id}`,
      `/organization/get-organization?organizationId=${stranger.id}`,
      `/organization/list-members?organizationId=${stranger.id}`,
      "/organization/get-full-organization?organizationSlug=no-such-tenant",
      "/organization/get-full-organization?organizationId=not-a-uuid",
    ]) {
      const answer = await auth(cookie, path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 403, body: NOT_A_MEMBER });
    }
    const me = await trpc("query", "dashboard.me", undefined, { cookie });
    expect(me.status).toBe(200);
    expect(me.data).toMatchObject({ tenant: { id: suspended.id } });
  });
});
