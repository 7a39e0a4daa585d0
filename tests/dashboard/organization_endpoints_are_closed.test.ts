// Issue 13, finding 2: better-auth's own organization endpoints let an owner delete the tenant and
// an admin rename it or change roles, unaudited. Now every /api/auth/organization/* endpoint that
// changes a tenant, its members or roles answers 404 in the error envelope and changes nothing,
// signed in as owner or admin (or not at all); reads and set-active stay open (set-active only for the
// user's own tenants, leaving the session as it was otherwise). Invitations go through the dashboard's
// procedure, audited; better-auth's get-, accept- and reject-invitation (which open an invitation by its
// id, readable by every member) are closed too, and the invitee joins with the link's secret through
// the dashboard's procedure, audited.
//
// The same scenario runs against better-auth's handler in this process (what the route file mounts)
// and over real HTTP through the lean front, whose /api/auth is the Next route: that half needs a
// `next build` made after this change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { handleTrpcRequest } from "../../server/http/trpc-handler";
import { getAuth } from "../../server/dashboard/auth";
import { createDashboardUser } from "../../server/dashboard/users";
import { NOT_A_MEMBER_MESSAGE, REFUSED_MESSAGE } from "../../server/dashboard/organization-endpoints";
import { call, newKey, newTenant } from "../helpers/api";
import { ORIGIN, PASSWORD, sessionCookie, userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { answerOf, authOverHttp, SIGN_IN_ENV, signInOverHttp, trpcOverHttp, type HttpAnswer } from "./http-session";

type Front = {
  name: string;
  signIn(email: string): Promise<string>;
  auth(cookie: string, path: string, body?: unknown): Promise<HttpAnswer>;
  trpc(cookie: string, kind: "query" | "mutation", path: string, input?: unknown): Promise<HttpAnswer>;
  api(key: string, path: string): Promise<number>;
};

/** better-auth's handler and the tRPC handler called in this process, as the route files mount them. */
const inProcess: Front = {
  name: "better-auth's handler in process",
  signIn: sessionCookie,
  auth: async (cookie, path, body) => {
    const headers = { cookie, origin: ORIGIN, host: new URL(ORIGIN).host, "content-type": "application/json" };
    const init = body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) };
    return answerOf(await (await getAuth()).handler(new Request(`${ORIGIN}/api/auth${path}`, init)));
  },
  trpc: async (cookie, kind, path, input) => {
    const headers = { cookie, origin: ORIGIN, host: new URL(ORIGIN).host };
    const req =
      kind === "query"
        ? new Request(`${ORIGIN}/api/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers })
        : new Request(`${ORIGIN}/api/trpc/${path}`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify(input ?? null),
          });
    return answerOf(await handleTrpcRequest(req));
  },
  api: async (key, path) => (await call("GET", path, { key })).status,
};

function overHttp(mount: () => Running): Front {
  return {
    name: "the lean front over HTTP",
    signIn: (email) => signInOverHttp(mount().url, email),
    auth: (cookie, path, body) => authOverHttp(mount().url, cookie, path, body),
    trpc: (cookie, kind, path, input) => trpcOverHttp(mount().url, cookie, kind, path, input),
    api: async (key, path) => (await fetch(`${mount().url}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } })).status,
  };
}

const REFUSED = { error: { code: "not_found", message: REFUSED_MESSAGE } };

type Fixture = { tenantId: string; tenantName: string; otherTenantId: string; key: string; owner: string; admin: string; member: string; invitee: string };

async function fixture(): Promise<Fixture> {
  const tenant = await newTenant("Org endpoints");
  const invitee = `invitee-${tenant.id.slice(0, 8)}@example.test`;
  await createDashboardUser({ email: invitee, password: PASSWORD, name: "Invitee" });
  return {
    tenantId: tenant.id,
    tenantName: tenant.name,
    otherTenantId: (await newTenant("Org endpoints, another")).id,
    key: (await newKey(tenant.id, ["read"])).key,
    owner: await userInTenant(tenant.id, "owner"),
    admin: await userInTenant(tenant.id, "admin"),
    member: await userInTenant(tenant.id, "member"),
    invitee,
  };
}

function scenario(front: () => Front, fx: () => Fixture) {
  const cookies: Record<"owner" | "admin" | "member" | "invitee", string> = { owner: "", admin: "", member: "", invitee: "" };
  let memberIds: Record<string, string> = {};
  let pendingInvitation = "";

  const snapshot = async () => {
    const me = await front().trpc(cookies.owner, "query", "dashboard.me");
    const members = await front().trpc(cookies.owner, "query", "dashboard.members.list");
    const audit = await front().trpc(cookies.owner, "query", "dashboard.auditLog.list", {});
    return { tenant: me.body.result.data.tenant, members: members.body.result.data, audit: audit.body.result.data.data };
  };

  beforeAll(async () => {
    for (const role of ["owner", "admin", "member", "invitee"] as const) cookies[role] = await front().signIn(fx()[role]);
    const list = await front().trpc(cookies.owner, "query", "dashboard.members.list");
    memberIds = Object.fromEntries(list.body.result.data.members.map((m: { email: string; id: string }) => [m.email, m.id]));
    const invited = await front().trpc(cookies.owner, "mutation", "dashboard.members.invite", {
      email: `pending-${fx().tenantId.slice(0, 8)}@example.test`,
      role: "member",
    });
    expect(invited.status).toBe(200);
    pendingInvitation = invited.body.result.data.id;
  });

  it("404_every_endpoint_that_changes_the_tenant_its_members_or_roles_is_refused_for_owner_admin_and_anonymous_and_nothing_changes", async () => {
    const { tenantId, member, admin } = fx();
    const attempts: [string, unknown][] = [
      ["/organization/delete", { organizationId: tenantId }],
      ["/organization/update", { organizationId: tenantId, data: { name: "Renamed by better-auth" } }],
      ["/organization/update-member-role", { organizationId: tenantId, memberId: memberIds[member], role: "owner" }],
      ["/organization/remove-member", { organizationId: tenantId, memberIdOrEmail: admin }],
      ["/organization/leave", { organizationId: tenantId }],
      ["/organization/invite-member", { organizationId: tenantId, email: "direct@example.test", role: "owner" }],
      ["/organization/cancel-invitation", { invitationId: pendingInvitation }],
      ["/organization/create", { name: "Another", slug: `another-${tenantId.slice(0, 8)}` }],
      ["/organization/accept-invitation", { invitationId: pendingInvitation }],
      ["/organization/reject-invitation", { invitationId: pendingInvitation }],
      [`/organization/get-invitation?id=${pendingInvitation}`, undefined],
    ];
    const before = await snapshot();
    for (const cookie of [cookies.owner, cookies.admin, ""]) {
      for (const [path, body] of attempts) {
        const answer = await front().auth(cookie, path, body);
        expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 404, body: REFUSED });
      }
    }
    // Team and role endpoints are not served at all (teams and dynamic roles are off).
    for (const path of ["/organization/create-team", "/organization/create-role"]) {
      expect((await front().auth(cookies.owner, path, { name: "x" })).status).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    expect(before.tenant).toMatchObject({ id: tenantId, name: fx().tenantName });
    expect(await front().api(fx().key, "/offerings?limit=1")).toBe(200);
  });

  it("200_reads_and_set_active_stay_open_and_the_dashboard_still_works", async () => {
    const full = await front().auth(cookies.member, `/organization/get-full-organization?organizationId=${fx().tenantId}`);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ id: fx().tenantId, name: fx().tenantName });
    const active = await front().auth(cookies.admin, "/organization/set-active", { organizationId: fx().tenantId });
    expect(active.status).toBe(200);
    const me = await front().trpc(cookies.admin, "query", "dashboard.me");
    expect(me.status).toBe(200);
    expect(me.body.result.data).toMatchObject({ role: "admin", tenant: { id: fx().tenantId } });
    // Another tenant: refused, and the session keeps its tenant.
    const foreign = await front().auth(cookies.admin, "/organization/set-active", { organizationId: fx().otherTenantId });
    expect({ status: foreign.status, body: foreign.body }).toEqual({ status: 403, body: { error: { code: "forbidden", message: NOT_A_MEMBER_MESSAGE } } });
    const still = await front().trpc(cookies.admin, "query", "dashboard.me");
    expect(still.status).toBe(200);
    expect(still.body.result.data).toMatchObject({ role: "admin", tenant: { id: fx().tenantId } });
  });

  it("the_dashboard_invites_audited_an_admin_cannot_invite_an_owner_and_the_invitee_joins_audited", async () => {
    const { invitee, admin } = fx();
    const asOwner = await front().trpc(cookies.admin, "mutation", "dashboard.members.invite", { email: invitee, role: "owner" });
    expect(asOwner.status).toBe(403);
    expect(asOwner.body.error).toMatchObject({ message: "only an owner can invite an owner", data: { appCode: "forbidden", field: "role" } });

    const invited = await front().trpc(cookies.admin, "mutation", "dashboard.members.invite", { email: invitee.toUpperCase(), role: "admin" });
    expect(invited.status).toBe(200);
    const invitation = invited.body.result.data;
    expect(invitation).toMatchObject({ email: invitee, role: "admin" });
    const again = await front().trpc(cookies.admin, "mutation", "dashboard.members.invite", { email: invitee, role: "member" });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ message: `${invitee} already has a pending invitation`, data: { appCode: "conflict", field: "email" } });
    const already = await front().trpc(cookies.admin, "mutation", "dashboard.members.invite", { email: fx().member, role: "member" });
    expect(already.body.error).toMatchObject({ message: `${fx().member} is already a member of this tenant`, data: { appCode: "conflict", field: "email" } });

    const secret = new URLSearchParams(new URL(invitation.link).hash.slice(1)).get("secret");
    const accepted = await front().trpc(cookies.invitee, "mutation", "dashboard.invitation.accept", { secret });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result.data).toEqual({ tenant_id: fx().tenantId, email: invitee, role: "admin" });
    const { members, audit } = await snapshot();
    expect(members.members.find((m: { email: string }) => m.email === invitee)).toMatchObject({ role: "admin" });
    const entries = audit.filter((e: { target_id: string; details: { email?: string } }) => e.details.email === invitee);
    expect(entries.map((e: any) => [e.action, e.actor_label, e.details])).toEqual([
      ["member.joined", invitee, { email: invitee, role: "admin", invitation_id: invitation.id }],
      ["member.invited", admin, { email: invitee, role: "admin" }],
    ]);
  });
}

describe("organization endpoints: better-auth's handler in process", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await fixture();
  });
  scenario(
    () => inProcess,
    () => fx,
  );
});

describe("organization endpoints over HTTP through the lean front (needs a `next build` made after this change)", () => {
  let fx: Fixture;
  let mount: Running;
  beforeAll(async () => {
    fx = await fixture();
    mount = await startMount("lean", SIGN_IN_ENV);
  });
  afterAll(async () => mount?.stop());
  scenario(
    () => overHttp(() => mount),
    () => fx,
  );
});
