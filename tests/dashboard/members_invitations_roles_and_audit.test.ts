// Members from the dashboard: invitations with a copyable link shown once (and an email through the HTTP
// mail transport when one is set), resend (a new link) and revoke, the accept page's procedures
// (describe, join with a new account, accept when signed in), role changes and removal with the role
// rules, every change audited, one tenant never reaching another's members. Through the real
// /api/trpc handler with better-auth sessions.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant } from "../helpers/api";
import { ORIGIN, PASSWORD, sessionCookie, signIn, trpc, userInTenant } from "../helpers/dashboard";

type Ctx = { tenant: string; name: string; owner: string; admin: string; member: string; cookies: Record<"owner" | "admin" | "member", string> };

async function tenantWithStaff(name: string): Promise<Ctx> {
  const created = await newTenant(name);
  const tenant = created.id;
  const [owner, admin, member] = [await userInTenant(tenant, "owner"), await userInTenant(tenant, "admin"), await userInTenant(tenant, "member")];
  return {
    tenant,
    name: created.name,
    owner,
    admin,
    member,
    cookies: { owner: await sessionCookie(owner), admin: await sessionCookie(admin), member: await sessionCookie(member) },
  };
}

const memberIdOf = async (cookie: string, email: string) => {
  const list = await trpc("query", "dashboard.members.list", undefined, { cookie });
  return list.data.members.find((m: { email: string }) => m.email === email)?.id as string;
};

const auditOf = async (cookie: string, targetId: string) => {
  const audit = await trpc("query", "dashboard.auditLog.list", {}, { cookie });
  return audit.data.data.filter((e: { target_id: string }) => e.target_id === targetId).map((e: any) => [e.action, e.actor_label, e.details]);
};

/** The secret an invitation link carries (in its fragment). */
const secretOf = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get("secret") as string;

const describeLink = (link: string) => trpc("mutation", "dashboard.invitation.describe", { secret: secretOf(link) });

let a: Ctx, b: Ctx;
beforeAll(async () => {
  a = await tenantWithStaff("Members A");
  b = await tenantWithStaff("Members B");
});

describe("invitations", () => {
  it("invite_answers_a_link_with_a_secret_once_the_list_shows_the_invitation_without_it_and_no_email_without_a_transport", async () => {
    const email = `new-${a.tenant.slice(0, 8)}@example.test`;
    const res = await trpc("mutation", "dashboard.members.invite", { email, role: "member" }, { cookie: a.cookies.admin });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ email, role: "member", email_sent: false, email_error: null });
    expect(res.data.link).toMatch(new RegExp(`^${ORIGIN}/accept-invitation#secret=[A-Za-z0-9_-]{43}$`));
    const listed = { id: res.data.id, email, role: "member", expires_at: res.data.expires_at, created_at: expect.any(String), expired: false };
    // Nobody's list carries a link, an owner's included: it exists only in the answer above.
    for (const cookie of [a.cookies.owner, a.cookies.admin, a.cookies.member]) {
      const list = await trpc("query", "dashboard.members.list", undefined, { cookie });
      expect(list.data.invitations.find((i: { id: string }) => i.id === res.data.id)).toEqual(listed);
      expect(JSON.stringify(list.data)).not.toContain(secretOf(res.data.link));
    }
  });

  it("400_invite_with_a_bad_email_names_the_field_in_words", async () => {
    const res = await trpc("mutation", "dashboard.members.invite", { email: "not an email", role: "member" }, { cookie: a.cookies.owner });
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({ data: { appCode: "bad_request", field: "email" } });
    expect(res.error!.message).toContain("enter an email address, like name@company.com");
  });

  it("resend_makes_a_new_link_and_the_old_one_stops_working_revoke_closes_the_link_both_audited", async () => {
    const email = `resend-${a.tenant.slice(0, 8)}@example.test`;
    const invited = await trpc("mutation", "dashboard.members.invite", { email, role: "admin" }, { cookie: a.cookies.owner });
    const resent = await trpc("mutation", "dashboard.members.resendInvitation", { invitation_id: invited.data.id }, { cookie: a.cookies.owner });
    expect(resent.status).toBe(200);
    expect(resent.data).toMatchObject({ id: invited.data.id, email, role: "admin" });
    expect(resent.data.link).toMatch(new RegExp(`^${ORIGIN}/accept-invitation#secret=[A-Za-z0-9_-]{43}$`));
    expect(resent.data.link).not.toBe(invited.data.link);
    expect(new Date(resent.data.expires_at).getTime()).toBeGreaterThanOrEqual(new Date(invited.data.expires_at).getTime());
    expect((await describeLink(invited.data.link)).data).toMatchObject({ status: "not_found", email: null });
    expect((await describeLink(resent.data.link)).data).toMatchObject({ status: "pending", email });

    const revoked = await trpc("mutation", "dashboard.members.revokeInvitation", { invitation_id: invited.data.id }, { cookie: a.cookies.admin });
    expect(revoked.status).toBe(200);
    expect(revoked.data).toEqual({ id: invited.data.id, status: "canceled" });
    const described = await describeLink(resent.data.link);
    expect(described.data).toMatchObject({ status: "canceled", email, role: "admin", tenant_name: a.name, has_account: false });
    const join = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret: secretOf(resent.data.link), name: "Late", password: PASSWORD });
    expect(join.status).toBe(409);
    expect(join.error).toMatchObject({ data: { appCode: "conflict", field: "secret" } });
    const again = await trpc("mutation", "dashboard.members.revokeInvitation", { invitation_id: invited.data.id }, { cookie: a.cookies.owner });
    expect(again.status).toBe(404);
    expect(again.error?.message).toBe("no pending invitation with this id");

    expect(await auditOf(a.cookies.owner, invited.data.id)).toEqual([
      ["member.invitation_revoked", a.admin, { email, role: "admin" }],
      ["member.invitation_resent", a.owner, { email, role: "admin" }],
      ["member.invited", a.owner, { email, role: "admin" }],
    ]);
  });

  it("403_an_admin_cannot_resend_or_revoke_an_owners_invitation_and_a_member_cannot_invite", async () => {
    const invited = await trpc(
      "mutation",
      "dashboard.members.invite",
      { email: `owner2-${a.tenant.slice(0, 8)}@example.test`, role: "owner" },
      { cookie: a.cookies.owner },
    );
    for (const path of ["dashboard.members.resendInvitation", "dashboard.members.revokeInvitation"]) {
      const res = await trpc("mutation", path, { invitation_id: invited.data.id }, { cookie: a.cookies.admin });
      expect(res.status).toBe(403);
      expect(res.error?.message).toBe("only an owner can manage an owner's invitation");
    }
    const byMember = await trpc("mutation", "dashboard.members.invite", { email: "x@example.test", role: "member" }, { cookie: a.cookies.member });
    expect(byMember.status).toBe(403);
  });

  it("404_another_tenants_invitation_is_not_found_for_resend_or_revoke", async () => {
    const invited = await trpc(
      "mutation",
      "dashboard.members.invite",
      { email: `iso-${a.tenant.slice(0, 8)}@example.test`, role: "member" },
      { cookie: a.cookies.owner },
    );
    for (const path of ["dashboard.members.resendInvitation", "dashboard.members.revokeInvitation"]) {
      expect((await trpc("mutation", path, { invitation_id: invited.data.id }, { cookie: b.cookies.owner })).status).toBe(404);
    }
    const list = await trpc("query", "dashboard.members.list", undefined, { cookie: b.cookies.owner });
    expect(JSON.stringify(list.data)).not.toContain(invited.data.id);
    expect((await describeLink(invited.data.link)).data.status).toBe("pending");
  });

  it("a_new_person_joins_from_the_link_with_a_password_audited_and_signs_in_to_the_tenant", async () => {
    const email = `joiner-${a.tenant.slice(0, 8)}@example.test`;
    const invited = await trpc("mutation", "dashboard.members.invite", { email, role: "admin" }, { cookie: a.cookies.owner });
    const secret = secretOf(invited.data.link);
    const described = await describeLink(invited.data.link);
    expect(described.data).toMatchObject({ id: invited.data.id, email, role: "admin", tenant_name: a.name, status: "pending", has_account: false });

    const short = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "Jo", password: "short" });
    expect(short.status).toBe(400);
    expect(short.error).toMatchObject({ data: { field: "password" } });
    expect(short.error!.message).toContain("use at least 8 characters");

    const joined = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "Jo Joiner", password: PASSWORD });
    expect(joined.status).toBe(200);
    expect(joined.data).toEqual({ email, role: "admin" });
    const twice = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "Jo", password: PASSWORD });
    expect(twice.status).toBe(409);
    expect((await describeLink(invited.data.link)).data).toMatchObject({ status: "accepted", has_account: true });

    const cookie = await sessionCookie(email);
    const me = await trpc("query", "dashboard.me", undefined, { cookie });
    expect(me.data).toMatchObject({ role: "admin", tenant: { id: a.tenant } });
    const memberId = await memberIdOf(a.cookies.owner, email);
    expect(await auditOf(a.cookies.owner, memberId)).toEqual([["member.joined", email, { email, role: "admin", invitation_id: invited.data.id }]]);
  });

  it("an_existing_account_is_told_to_sign_in_and_joins_with_the_secret_audited_and_the_tenant_becomes_active", async () => {
    const existing = await userInTenant(b.tenant, "member");
    const invited = await trpc("mutation", "dashboard.members.invite", { email: existing, role: "member" }, { cookie: a.cookies.owner });
    const secret = secretOf(invited.data.link);
    expect((await describeLink(invited.data.link)).data).toMatchObject({ has_account: true, status: "pending" });
    const refused = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "X", password: PASSWORD });
    expect(refused.status).toBe(409);
    expect(refused.error?.message).toBe(`an account for ${existing} exists: sign in to accept`);

    const anonymous = await trpc("mutation", "dashboard.invitation.accept", { secret });
    expect(anonymous.status).toBe(401);
    expect(anonymous.error?.message).toBe("sign in to accept this invitation");
    // Someone else, signed in, holding the link: not the invited address.
    const other = await trpc("mutation", "dashboard.invitation.accept", { secret }, { cookie: b.cookies.admin });
    expect(other.status).toBe(403);
    expect(other.error).toMatchObject({
      message: "this invitation was sent to another address: sign in with the address it was sent to",
      data: { field: "secret" },
    });

    const cookie = await sessionCookie(existing);
    expect((await trpc("query", "dashboard.me", undefined, { cookie })).data).toMatchObject({ tenant: { id: b.tenant } });
    const accepted = await trpc("mutation", "dashboard.invitation.accept", { secret }, { cookie });
    expect(accepted.status).toBe(200);
    expect(accepted.data).toEqual({ tenant_id: a.tenant, email: existing, role: "member" });
    expect((await trpc("query", "dashboard.me", undefined, { cookie })).data).toMatchObject({ role: "member", tenant: { id: a.tenant } });
    const memberId = await memberIdOf(a.cookies.owner, existing);
    expect(await auditOf(a.cookies.owner, memberId)).toEqual([
      ["member.joined", existing, { email: existing, role: "member", invitation_id: invited.data.id }],
    ]);
    const twice = await trpc("mutation", "dashboard.invitation.accept", { secret }, { cookie });
    expect(twice.status).toBe(409);
  });

  it("describe_of_an_unknown_secret_answers_status_not_found_and_joining_it_is_404_naming_the_secret", async () => {
    const secret = "A".repeat(43);
    const res = await trpc("mutation", "dashboard.invitation.describe", { secret });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ id: null, email: null, role: null, tenant_name: null, status: "not_found", expires_at: null, has_account: false });
    const join = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "X", password: PASSWORD });
    expect(join.status).toBe(404);
    expect(join.error).toMatchObject({
      message: "this invitation link is not valid (a newer link may have replaced it); ask for a new link",
      data: { field: "secret" },
    });
  });

  it("400_a_missing_or_damaged_secret_names_the_field", async () => {
    for (const [input, message] of [
      [{}, "the link has no invitation secret: open the whole link from your invitation"],
      [{ secret: "" }, "the link has no invitation secret: open the whole link from your invitation"],
      [{ secret: "not/a secret" }, "the invitation secret is damaged: open the whole link from your invitation"],
      [{ secret: "A".repeat(129) }, "at most 128 characters"],
      [{ id: "00000000-0000-4000-8000-000000000000" }, undefined],
    ] as const) {
      const res = await trpc("mutation", "dashboard.invitation.describe", input);
      expect(res.status).toBe(400);
      if (message) expect(res.error).toMatchObject({ message: `invalid field 'secret': ${message}`, data: { appCode: "bad_request", field: "secret" } });
    }
  });
});

describe("invitation email through the HTTP mail transport", () => {
  let server: Server;
  const received: { auth: string | undefined; body: any }[] = [];
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => {
        received.push({ auth: req.headers.authorization, body: JSON.parse(data) });
        res.writeHead(req.url === "/fail" ? 503 : 202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  });
  afterAll(async () => {
    delete process.env.INVITATION_MAIL_WEBHOOK_URL;
    delete process.env.INVITATION_MAIL_WEBHOOK_TOKEN;
    await new Promise((r) => server.close(r));
  });

  it("the_transport_receives_the_invitation_with_its_link_and_a_refusal_still_answers_the_link", async () => {
    const port = (server.address() as AddressInfo).port;
    process.env.INVITATION_MAIL_WEBHOOK_URL = `http://127.0.0.1:${port}/send`;
    process.env.INVITATION_MAIL_WEBHOOK_TOKEN = "mail-token";
    const email = `mailed-${a.tenant.slice(0, 8)}@example.test`;
    const res = await trpc("mutation", "dashboard.members.invite", { email, role: "member" }, { cookie: a.cookies.owner });
    expect(res.data).toMatchObject({ email_sent: true, email_error: null });
    expect(received).toHaveLength(1);
    expect(received[0].auth).toBe("Bearer mail-token");
    expect(received[0].body).toEqual({
      to: email,
      subject: `You are invited to ${a.name}`,
      text: `${a.owner} invited you to join ${a.name} as member.\n\nAccept the invitation: ${res.data.link}\n\nThe link works for 7 days. If you did not expect this, ignore this email.`,
    });

    process.env.INVITATION_MAIL_WEBHOOK_URL = `http://127.0.0.1:${port}/fail`;
    const resent = await trpc("mutation", "dashboard.members.resendInvitation", { invitation_id: res.data.id }, { cookie: a.cookies.owner });
    expect(resent.status).toBe(200);
    expect(resent.data).toMatchObject({ email_sent: false, email_error: "the mail transport answered 503" });
    expect(received).toHaveLength(2);
    // The resend's email carries the resend's new link.
    expect(resent.data.link).not.toBe(res.data.link);
    expect(received[1].body.text).toContain(`Accept the invitation: ${resent.data.link}\n`);
  });
});

describe("role changes and removal", () => {
  it("an_admin_promotes_a_member_to_admin_audited_but_cannot_touch_owners_admins_or_make_owners", async () => {
    const c = await tenantWithStaff("Roles C");
    const memberId = await memberIdOf(c.cookies.owner, c.member);
    const ownerId = await memberIdOf(c.cookies.owner, c.owner);
    const adminId = await memberIdOf(c.cookies.owner, c.admin);

    const toOwner = await trpc("mutation", "dashboard.members.changeRole", { member_id: memberId, role: "owner" }, { cookie: c.cookies.admin });
    expect(toOwner.status).toBe(403);
    expect(toOwner.error).toMatchObject({ message: "only an owner can make an owner", data: { field: "role" } });
    for (const [id, role] of [
      [ownerId, "member"],
      [adminId, "member"],
    ] as const) {
      const res = await trpc("mutation", "dashboard.members.changeRole", { member_id: id, role }, { cookie: c.cookies.admin });
      expect(res.status).toBe(403);
      expect(res.error?.message).toBe("an admin can change the role of members only; ask an owner");
    }
    const removeOwner = await trpc("mutation", "dashboard.members.remove", { member_id: ownerId }, { cookie: c.cookies.admin });
    expect(removeOwner.status).toBe(403);
    expect(removeOwner.error?.message).toBe("an admin can remove members only; ask an owner");

    const promoted = await trpc("mutation", "dashboard.members.changeRole", { member_id: memberId, role: "admin" }, { cookie: c.cookies.admin });
    expect(promoted.status).toBe(200);
    expect(promoted.data).toEqual({ id: memberId, email: c.member, role: "admin" });
    expect(await auditOf(c.cookies.owner, memberId)).toEqual([
      ["member.role_changed", c.admin, { email: c.member, role: "admin", previous_role: "member" }],
      ["member.added", "cli", { email: c.member, role: "member" }],
    ]);
    const byMember = await trpc(
      "mutation",
      "dashboard.members.changeRole",
      { member_id: ownerId, role: "member" },
      { cookie: await sessionCookie(await userInTenant(c.tenant, "member")) },
    );
    expect(byMember.status).toBe(403);
  });

  it("409_nobody_demotes_or_removes_the_last_owner_and_a_second_owner_makes_it_possible", async () => {
    const c = await tenantWithStaff("Roles D");
    const ownerId = await memberIdOf(c.cookies.owner, c.owner);
    const demote = await trpc("mutation", "dashboard.members.changeRole", { member_id: ownerId, role: "admin" }, { cookie: c.cookies.owner });
    expect(demote.status).toBe(409);
    expect(demote.error).toMatchObject({
      message: "cannot demote the last owner; make someone else an owner first",
      data: { appCode: "conflict", field: "member_id" },
    });
    const remove = await trpc("mutation", "dashboard.members.remove", { member_id: ownerId }, { cookie: c.cookies.owner });
    expect(remove.status).toBe(409);
    expect(remove.error?.message).toBe("cannot remove the last owner; make someone else an owner first");

    const adminId = await memberIdOf(c.cookies.owner, c.admin);
    expect((await trpc("mutation", "dashboard.members.changeRole", { member_id: adminId, role: "owner" }, { cookie: c.cookies.owner })).status).toBe(200);
    const demoted = await trpc("mutation", "dashboard.members.changeRole", { member_id: ownerId, role: "member" }, { cookie: c.cookies.owner });
    expect(demoted.status).toBe(200);
    // The former admin is now the only owner: the same rule holds for them.
    const last = await trpc("mutation", "dashboard.members.remove", { member_id: adminId }, { cookie: c.cookies.admin });
    expect(last.status).toBe(409);
    const owners = (await trpc("query", "dashboard.members.list", undefined, { cookie: c.cookies.admin })).data.members.filter(
      (m: { role: string }) => m.role === "owner",
    );
    expect(owners.map((m: { email: string }) => m.email)).toEqual([c.admin]);
  });

  it("an_owner_removes_a_member_audited_and_the_removed_session_gets_401_on_its_next_call", async () => {
    const c = await tenantWithStaff("Roles E");
    const memberId = await memberIdOf(c.cookies.owner, c.member);
    expect((await trpc("query", "dashboard.me", undefined, { cookie: c.cookies.member })).status).toBe(200);
    const removed = await trpc("mutation", "dashboard.members.remove", { member_id: memberId }, { cookie: c.cookies.owner });
    expect(removed.status).toBe(200);
    expect(removed.data).toEqual({ id: memberId, removed: true });
    expect((await trpc("query", "dashboard.me", undefined, { cookie: c.cookies.member })).status).toBe(401);
    expect(await memberIdOf(c.cookies.owner, c.member)).toBeUndefined();
    expect((await auditOf(c.cookies.owner, memberId))[0]).toEqual(["member.removed", c.owner, { email: c.member, role: "member" }]);
    // The person's account stays: they can still sign in (to no tenant here).
    expect((await signIn(c.member, { ip: "198.51.100.250" })).status).toBe(200);
  });

  it("404_an_owner_of_another_tenant_cannot_change_or_remove_this_tenants_members", async () => {
    const memberId = await memberIdOf(a.cookies.owner, a.member);
    const change = await trpc("mutation", "dashboard.members.changeRole", { member_id: memberId, role: "admin" }, { cookie: b.cookies.owner });
    expect(change.status).toBe(404);
    expect(change.error?.message).toBe("no member with this id in this tenant");
    expect((await trpc("mutation", "dashboard.members.remove", { member_id: memberId }, { cookie: b.cookies.owner })).status).toBe(404);
    const list = await trpc("query", "dashboard.members.list", undefined, { cookie: a.cookies.owner });
    expect(list.data.members.find((m: { id: string }) => m.id === memberId)).toMatchObject({ email: a.member, role: "member" });
  });
});
