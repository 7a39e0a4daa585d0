// An invitation is opened by its link's secret, never by its id. The id is what every member of the
// tenant can read (the members list, the audit log's target_id); on the old code it was the whole link,
// so a plain member (or an admin, for an owner's invitation) could set a password for an invited
// address through the public accept procedure and sign in as that owner. Here: nothing a member or an
// admin can read opens the invitation, on any accept path (the platform's procedures and better-auth's
// own endpoints); a link is single-use, expires, and a resend replaces it; the secret is in no list,
// audit entry, event, database row or log line; an unknown secret is refused before the password is
// hashed. Also: set-active with a tenant the user is not a member of leaves their session as it was.
import { type MockInstance, afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAuth } from "../../server/dashboard/auth";
import { acceptWithNewAccount } from "../../server/dashboard/invitations";
import { hashPassword } from "../../server/dashboard/users";
import { hashInvitationSecret } from "../../server/dashboard/invitation-secret";
import { NOT_A_MEMBER_MESSAGE, REFUSED_MESSAGE } from "../../server/dashboard/organization-endpoints";
import { getDb } from "../../server/db/client";
import { log } from "../../server/lib/log";
import { captureLogLines, type LogLines, releaseLogLines } from "../helpers/log-lines";
import { newTenant } from "../helpers/api";
import { ORIGIN, PASSWORD, sessionCookie, signIn, trpc, userInTenant } from "../helpers/dashboard";
import { answerOf, type HttpAnswer } from "./http-session";

type Staff = { tenant: string; slug: string; owner: string; admin: string; member: string; cookies: Record<"owner" | "admin" | "member", string> };

async function tenantWithStaff(name: string): Promise<Staff> {
  const created = await newTenant(name);
  const [owner, admin, member] = [await userInTenant(created.id, "owner"), await userInTenant(created.id, "admin"), await userInTenant(created.id, "member")];
  return {
    tenant: created.id,
    slug: created.slug,
    owner,
    admin,
    member,
    cookies: { owner: await sessionCookie(owner), admin: await sessionCookie(admin), member: await sessionCookie(member) },
  };
}

/** One of better-auth's endpoints, through its handler as /api/auth mounts it. */
async function authCall(cookie: string, path: string, body?: unknown): Promise<HttpAnswer> {
  const headers: Record<string, string> = { origin: ORIGIN, host: new URL(ORIGIN).host, "content-type": "application/json" };
  if (cookie) headers.cookie = cookie;
  const init = body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) };
  return answerOf(await (await getAuth()).handler(new Request(`${ORIGIN}/api/auth${path}`, init)));
}

const secretOf = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get("secret") as string;

const invite = async (cookie: string, email: string, role: "owner" | "admin" | "member") => {
  const res = await trpc("mutation", "dashboard.members.invite", { email, role }, { cookie });
  expect(res.status).toBe(200);
  return res.data as { id: string; link: string; email: string };
};

/** Everything a signed-in member of the tenant can read about invitations: the list and the audit log. */
async function whatTheyCanRead(cookie: string) {
  const list = await trpc("query", "dashboard.members.list", undefined, { cookie });
  const audit = await trpc("query", "dashboard.auditLog.list", {}, { cookie });
  const csv = await trpc("query", "dashboard.auditLog.exportCsv", {}, { cookie });
  expect([list.status, audit.status, csv.status]).toEqual([200, 200, 200]);
  return { list: list.data, audit: audit.data, csv: csv.data.csv as string };
}

/** The user and membership an accepted invitation would have made, and the invitation's state. */
async function outcomeFor(invitationId: string, email: string) {
  const db = await getDb();
  const [user, invitation] = await Promise.all([
    db.user.findUnique({ where: { email }, select: { id: true } }),
    db.invitation.findUnique({ where: { id: invitationId }, select: { status: true } }),
  ]);
  return { user: user?.id ?? null, status: invitation?.status };
}

/**
 * Every way to accept, tried with what a reader of the list and the audit log holds (the id, the ids in
 * the audit entries): as the reader's own session and with none.
 */
async function tryEveryAcceptPath(readerCookie: string, invitationId: string, ids: string[]) {
  const answers: Record<string, number> = {};
  for (const id of ids) {
    for (const [who, cookie] of [
      ["reader", readerCookie],
      ["anonymous", ""],
    ] as const) {
      const opts = cookie ? { cookie } : {};
      answers[`${who} describe ${id}`] = (await trpc("mutation", "dashboard.invitation.describe", { secret: id }, opts)).data?.status;
      answers[`${who} acceptWithNewAccount secret=${id}`] = (
        await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret: id, name: "Taken Over", password: "attacker password" }, opts)
      ).status;
      // The old procedure's input: refused as input now (400), it was a 200 takeover before.
      answers[`${who} acceptWithNewAccount id=${id}`] = (
        await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { id, name: "Taken Over", password: "attacker password" }, opts)
      ).status;
      answers[`${who} accept secret=${id}`] = (await trpc("mutation", "dashboard.invitation.accept", { secret: id }, opts)).status;
      answers[`${who} better-auth accept-invitation ${id}`] = (await authCall(cookie, "/organization/accept-invitation", { invitationId: id })).status;
      answers[`${who} better-auth reject-invitation ${id}`] = (await authCall(cookie, "/organization/reject-invitation", { invitationId: id })).status;
      answers[`${who} better-auth get-invitation ${id}`] = (await authCall(cookie, `/organization/get-invitation?id=${encodeURIComponent(id)}`)).status;
    }
  }
  expect(ids).toContain(invitationId);
  return answers;
}

const REFUSED_ANSWERS = (ids: string[]) =>
  Object.fromEntries(
    ids.flatMap((id) =>
      (["reader", "anonymous"] as const).flatMap((who) => [
        [`${who} describe ${id}`, "not_found"],
        [`${who} acceptWithNewAccount secret=${id}`, 404],
        [`${who} acceptWithNewAccount id=${id}`, 400],
        // Signed in: the secret is unknown (404); without a session, sign-in comes first (401).
        [`${who} accept secret=${id}`, who === "reader" ? 404 : 401],
        [`${who} better-auth accept-invitation ${id}`, 404],
        [`${who} better-auth reject-invitation ${id}`, 404],
        [`${who} better-auth get-invitation ${id}`, 404],
      ]),
    ),
  );

let a: Staff, b: Staff;
beforeAll(async () => {
  a = await tenantWithStaff("Secret A");
  b = await tenantWithStaff("Secret B");
});

describe("what members and admins can read does not open an invitation", () => {
  it("404_a_member_reads_the_list_and_the_audit_log_and_cannot_accept_an_owner_invitation_on_any_path", async () => {
    const boss = `boss-${a.tenant.slice(0, 8)}@x.test`;
    const invited = await invite(a.cookies.owner, boss, "owner");
    const read = await whatTheyCanRead(a.cookies.member);
    const listed = read.list.invitations.find((i: { email: string }) => i.email === boss);
    expect(listed.id).toBe(invited.id);
    const auditIds = read.audit.data.filter((e: { details: { email?: string } }) => e.details.email === boss).map((e: { target_id: string }) => e.target_id);
    expect(auditIds).toEqual([invited.id]);
    expect(read.csv).toContain(invited.id);

    const ids = [listed.id];
    const answers = await tryEveryAcceptPath(a.cookies.member, invited.id, ids);
    expect(await outcomeFor(invited.id, boss)).toEqual({ user: null, status: "pending" });
    expect((await signIn(boss, { password: "attacker password", ip: "198.51.100.251" })).status).toBe(401);
    expect(answers).toEqual(REFUSED_ANSWERS(ids));
    expect(listed).not.toHaveProperty("link");
    for (const seen of [JSON.stringify(read.list), JSON.stringify(read.audit), read.csv]) expect(seen).not.toContain(secretOf(invited.link));
    // The member is still a member, and the tenant has its one owner.
    const members = (await trpc("query", "dashboard.members.list", undefined, { cookie: a.cookies.owner })).data.members;
    expect(members.filter((m: { role: string }) => m.role === "owner").map((m: { email: string }) => m.email)).toEqual([a.owner]);
  });

  it("403_an_admin_never_sees_an_owner_invitations_link_and_cannot_accept_it_with_what_they_read", async () => {
    const boss = `boss2-${a.tenant.slice(0, 8)}@x.test`;
    const invited = await invite(a.cookies.owner, boss, "owner");
    const read = await whatTheyCanRead(a.cookies.admin);
    const listed = read.list.invitations.find((i: { email: string }) => i.email === boss);
    // Whatever the list holds (on the old code, the whole link for an admin), tried on every path.
    const ids = [...new Set([listed.id, ...(listed.link ? [secretOf(listed.link)] : [])])];
    const answers = await tryEveryAcceptPath(a.cookies.admin, invited.id, ids);
    expect(await outcomeFor(invited.id, boss)).toEqual({ user: null, status: "pending" });
    expect(answers).toEqual(REFUSED_ANSWERS(ids));
    expect(listed).toEqual({ id: invited.id, email: boss, role: "owner", expires_at: expect.any(String), created_at: expect.any(String), expired: false });
    // A resend would show a (new) link: an admin may not resend an owner's invitation.
    const resend = await trpc("mutation", "dashboard.members.resendInvitation", { invitation_id: invited.id }, { cookie: a.cookies.admin });
    expect(resend.status).toBe(403);
    expect(resend.body).not.toHaveProperty("result");
    // The owner's link still works, for the invitee.
    const joined = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret: secretOf(invited.link), name: "Boss", password: PASSWORD });
    expect(joined.status).toBe(200);
    expect(joined.data).toEqual({ email: boss, role: "owner" });
  });
});

describe("a link is single-use, expires, and a resend replaces it", () => {
  it("409_a_second_accept_with_the_same_secret_is_refused_on_both_paths_and_two_at_once_make_one_member", async () => {
    const email = `once-${a.tenant.slice(0, 8)}@example.test`;
    const invited = await invite(a.cookies.owner, email, "member");
    const secret = secretOf(invited.link);
    const both = await Promise.all([
      trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "First", password: PASSWORD }),
      trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "Second", password: PASSWORD }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const again = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret, name: "Third", password: PASSWORD });
    expect(again.status).toBe(409);
    expect(again.error).toMatchObject({
      message: "this invitation is no longer open (accepted, revoked or expired); ask for a new link",
      data: { appCode: "conflict", field: "secret" },
    });
    const signedIn = await trpc("mutation", "dashboard.invitation.accept", { secret }, { cookie: await sessionCookie(email) });
    expect(signedIn.status).toBe(409);
    const members = (await trpc("query", "dashboard.members.list", undefined, { cookie: a.cookies.owner })).data.members;
    expect(members.filter((m: { email: string }) => m.email === email)).toHaveLength(1);
  });

  it("409_an_expired_link_is_refused_and_described_as_expired", async () => {
    const existing = await userInTenant(b.tenant, "member");
    const fresh = `expired-${a.tenant.slice(0, 8)}@example.test`;
    const invitations = [await invite(a.cookies.owner, fresh, "member"), await invite(a.cookies.owner, existing, "member")];
    await (await getDb()).invitation.updateMany({ where: { id: { in: invitations.map((i) => i.id) } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    for (const invited of invitations) {
      expect((await trpc("mutation", "dashboard.invitation.describe", { secret: secretOf(invited.link) })).data).toMatchObject({ status: "expired" });
    }
    const join = await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", {
      secret: secretOf(invitations[0].link),
      name: "Late",
      password: PASSWORD,
    });
    expect(join.status).toBe(409);
    const accept = await trpc("mutation", "dashboard.invitation.accept", { secret: secretOf(invitations[1].link) }, { cookie: await sessionCookie(existing) });
    expect(accept.status).toBe(409);
    expect(await outcomeFor(invitations[0].id, fresh)).toEqual({ user: null, status: "pending" });
  });

  it("resend_rotates_the_secret_the_old_link_is_refused_and_the_new_one_works", async () => {
    const existing = await userInTenant(b.tenant, "member");
    const invited = await invite(a.cookies.owner, existing, "admin");
    const resent = await trpc("mutation", "dashboard.members.resendInvitation", { invitation_id: invited.id }, { cookie: a.cookies.owner });
    expect(resent.status).toBe(200);
    expect(secretOf(resent.data.link)).not.toBe(secretOf(invited.link));
    const cookie = await sessionCookie(existing);
    const old = await trpc("mutation", "dashboard.invitation.accept", { secret: secretOf(invited.link) }, { cookie });
    expect(old.status).toBe(404);
    const accepted = await trpc("mutation", "dashboard.invitation.accept", { secret: secretOf(resent.data.link) }, { cookie });
    expect(accepted.status).toBe(200);
    expect(accepted.data).toEqual({ tenant_id: a.tenant, email: existing, role: "admin" });
  });
});

describe("the secret is shown once and stored nowhere in clear", () => {
  const captured: string[] = [];
  const spies: MockInstance[] = [];
  let logs: LogLines;
  let savedLogLevel: string | undefined;
  beforeAll(() => {
    savedLogLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "info"; // the test setup silences logs; this test reads every line
    logs = captureLogLines();
    for (const method of ["log", "info", "warn", "error", "debug"] as const) {
      spies.push(vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void captured.push(args.map(String).join(" "))));
    }
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      spies.push(
        vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
          captured.push(String(chunk));
          return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
        }) as typeof stream.write),
      );
    }
  });
  afterAll(() => {
    releaseLogLines();
    for (const spy of spies) spy.mockRestore();
    if (savedLogLevel === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = savedLogLevel;
  });

  it("no_list_audit_entry_event_database_row_or_log_line_holds_a_secret_through_invite_resend_and_accept", async () => {
    const existing = await userInTenant(b.tenant, "member");
    const fresh = `clear-${a.tenant.slice(0, 8)}@example.test`;
    const first = await invite(a.cookies.owner, fresh, "member");
    const resent = (await trpc("mutation", "dashboard.members.resendInvitation", { invitation_id: first.id }, { cookie: a.cookies.owner })).data;
    const other = await invite(a.cookies.admin, existing, "member");
    const secrets = [first, resent, other].map((i) => secretOf(i.link));
    expect(new Set(secrets).size).toBe(3);

    // A refused call too (its error may be logged), then both accept paths.
    expect((await trpc("mutation", "dashboard.invitation.accept", { secret: secrets[2] }, { cookie: b.cookies.owner })).status).toBe(403);
    expect((await trpc("mutation", "dashboard.invitation.acceptWithNewAccount", { secret: secrets[1], name: "Clear", password: PASSWORD })).status).toBe(200);
    expect((await trpc("mutation", "dashboard.invitation.accept", { secret: secrets[2] }, { cookie: await sessionCookie(existing) })).status).toBe(200);

    log.info("log capture canary");
    expect(logs.raw.some((line) => line.includes("log capture canary"))).toBe(true);
    const seen: string[] = [...captured, ...logs.raw];
    for (const staff of Object.values(a.cookies)) {
      const read = await whatTheyCanRead(staff);
      seen.push(JSON.stringify(read.list), JSON.stringify(read.audit), read.csv);
    }
    // better-auth's reads of invitations (still open): no secret, and no hash either.
    for (const path of [`/organization/list-invitations?organizationId=${a.tenant}`, `/organization/get-full-organization?organizationId=${a.tenant}`]) {
      const answer = await authCall(a.cookies.owner, path);
      expect(answer.status).toBe(200);
      seen.push(answer.text);
    }
    // Every row of every table (audit_logs, events, webhook deliveries, sessions…), as text.
    const db = await getDb();
    const tables = await db.$queryRawUnsafe<{ name: string }[]>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["invitations", "audit_logs", "events"]));
    for (const { name } of tables) {
      const rows = await db.$queryRawUnsafe<{ row: string }[]>(`SELECT row_to_json(t)::text AS row FROM "${name}" t`);
      seen.push(...rows.map((r) => r.row));
    }
    for (const secret of secrets) {
      const hash = hashInvitationSecret(secret);
      for (const text of seen) {
        expect(text.includes(secret)).toBe(false);
        if (!text.includes('"secret_hash"')) expect(text.includes(hash)).toBe(false);
      }
    }
  });
});

describe("an unknown link costs a database read, not a password hash", () => {
  it("404_an_unknown_secret_and_409_a_closed_one_are_refused_without_calling_the_hasher", async () => {
    const calls: string[] = [];
    const countingHash = async (password: string) => {
      calls.push(password);
      return hashPassword(password);
    };
    const unknown = acceptWithNewAccount({ secret: "B".repeat(43), name: "X", password: "a password 1" }, countingHash);
    await expect(unknown).rejects.toMatchObject({ errorCode: "not_found", field: "secret" });
    expect(calls).toEqual([]);

    const email = `hash-${a.tenant.slice(0, 8)}@example.test`;
    const invited = await invite(a.cookies.owner, email, "member");
    await trpc("mutation", "dashboard.members.revokeInvitation", { invitation_id: invited.id }, { cookie: a.cookies.owner });
    const closed = acceptWithNewAccount({ secret: secretOf(invited.link), name: "X", password: "a password 2" }, countingHash);
    await expect(closed).rejects.toMatchObject({ errorCode: "conflict", field: "secret" });
    expect(calls).toEqual([]);

    const open = await invite(a.cookies.owner, `hash2-${a.tenant.slice(0, 8)}@example.test`, "member");
    await expect(acceptWithNewAccount({ secret: secretOf(open.link), name: "Y", password: "a password 3" }, countingHash)).resolves.toMatchObject({
      role: "member",
    });
    expect(calls).toEqual(["a password 3"]);
  });
});

describe("set-active with a tenant the user is not a member of", () => {
  it("403_and_the_callers_session_keeps_its_tenant_so_the_next_dashboard_call_still_works", async () => {
    const cookie = a.cookies.admin;
    const before = await trpc("query", "dashboard.me", undefined, { cookie });
    expect(before.data).toMatchObject({ role: "admin", tenant: { id: a.tenant } });
    for (const body of [
      { organizationId: b.tenant },
      { organizationSlug: b.slug },
      { organizationId: "00000000-0000-4000-8000-000000000000" },
      { organizationId: "not-a-uuid" },
    ]) {
      const answer = await authCall(cookie, "/organization/set-active", body);
      expect({ body, status: answer.status }).toEqual({ body, status: 403 });
      const after = await trpc("query", "dashboard.me", undefined, { cookie });
      expect({ body, status: after.status, me: after.data }).toEqual({ body, status: 200, me: before.data });
      expect(answer.body).toEqual({ error: { code: "forbidden", message: NOT_A_MEMBER_MESSAGE } });
    }
    // Their own tenant, by id or slug, still works; so does better-auth's 401 without a session.
    expect((await authCall(cookie, "/organization/set-active", { organizationSlug: a.slug })).status).toBe(200);
    expect((await authCall("", "/organization/set-active", { organizationId: b.tenant })).status).toBe(401);
    expect((await authCall(cookie, "/organization/accept-invitation", { invitationId: "x" })).body).toEqual({
      error: { code: "not_found", message: REFUSED_MESSAGE },
    });
  });
});
