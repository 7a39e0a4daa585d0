import { beforeAll, describe, expect, it } from "vitest";
import { call, newTenant } from "../helpers/api";
import { sessionCookie, signIn, trpc, userInTenant } from "../helpers/dashboard";

let ownerA: string, memberA: string, ownerB: string;
let tenantA: string, tenantB: string;

beforeAll(async () => {
  tenantA = (await newTenant("Dashboard A")).id;
  tenantB = (await newTenant("Dashboard B")).id;
  ownerA = await sessionCookie(await userInTenant(tenantA, "owner"));
  memberA = await sessionCookie(await userInTenant(tenantA, "member"));
  ownerB = await sessionCookie(await userInTenant(tenantB, "owner"));
});

describe("dashboard identity", () => {
  it("a new session's active tenant is the user's membership, with its role", async () => {
    const me = await trpc("query", "dashboard.me", undefined, { cookie: memberA });
    expect(me.status).toBe(200);
    expect(me.data.tenant.id).toBe(tenantA);
    expect(me.data.role).toBe("member");
  });

  it("no session: 401 'sign in to continue'", async () => {
    const res = await trpc("query", "dashboard.apiKeys.list", undefined);
    expect(res.status).toBe(401);
    expect(res.error?.message).toBe("sign in to continue");
    expect(res.error?.data.appCode).toBe("unauthorized");
  });

  it("dashboard calls count against the per-user limit of 200 a minute", async () => {
    const res = await trpc("query", "dashboard.me", undefined, { cookie: ownerA });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("200");
  });
});

describe("api keys from the dashboard", () => {
  it("an owner issues a key that works on /api/v1 once, then revokes it and the key gets 401", async () => {
    const issued = await trpc("mutation", "dashboard.apiKeys.issue", { name: "CI key", scopes: ["read", "assistant:read"] }, { cookie: ownerA });
    expect(issued.status).toBe(200);
    expect(issued.data.plaintext).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(issued.data.key).toMatchObject({ name: "CI key", scopes: ["read", "assistant:read"], revoked_at: null });
    expect(issued.data.key.prefix).toBe(issued.data.plaintext.slice(0, 22));

    expect((await call("GET", "/offerings", { key: issued.data.plaintext })).status).toBe(200);

    const list = await trpc("query", "dashboard.apiKeys.list", undefined, { cookie: memberA });
    const row = list.data.find((k: any) => k.id === issued.data.key.id);
    expect(row).toMatchObject({ name: "CI key", last4: issued.data.plaintext.slice(-4) });
    expect(JSON.stringify(list.body)).not.toContain(issued.data.plaintext);

    const revoked = await trpc("mutation", "dashboard.apiKeys.revoke", { id: issued.data.key.id }, { cookie: ownerA });
    expect(revoked.status).toBe(200);
    expect(revoked.data.revoked_at).not.toBeNull();
    const after = await call("GET", "/offerings", { key: issued.data.plaintext });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: { code: "unauthorized", message: "unknown or revoked api key" } });

    const audit = await trpc("query", "dashboard.auditLog.list", {}, { cookie: memberA });
    const actions = audit.data.data.filter((e: any) => e.target_id === issued.data.key.id).map((e: any) => e.action);
    expect(actions).toEqual(["api_key.revoked", "api_key.issued"]);
    expect(audit.data.data[0].actor_label).toMatch(/^owner-/);
  });

  it("a member reads keys but cannot issue or revoke (403 naming the role)", async () => {
    const issue = await trpc("mutation", "dashboard.apiKeys.issue", { name: "nope", scopes: ["read"] }, { cookie: memberA });
    expect(issue.status).toBe(403);
    expect(issue.error?.message).toBe("role 'member' cannot make changes; an owner or admin can");
    const own = await trpc("mutation", "dashboard.apiKeys.issue", { name: "theirs", scopes: ["read"] }, { cookie: ownerA });
    const revoke = await trpc("mutation", "dashboard.apiKeys.revoke", { id: own.data.key.id }, { cookie: memberA });
    expect(revoke.status).toBe(403);
  });

  it("validation errors name the field (the form shows them beside it)", async () => {
    const res = await trpc("mutation", "dashboard.apiKeys.issue", { name: " ", scopes: ["read"] }, { cookie: ownerA });
    expect(res.status).toBe(400);
    expect(res.error?.message).toBe("invalid field 'name': give the key a name");
    expect(res.error?.data.field).toBe("name");
    const scopes = await trpc("mutation", "dashboard.apiKeys.issue", { name: "x", scopes: [] }, { cookie: ownerA });
    expect(scopes.error?.data.field).toBe("scopes");
  });

  it("tenant B's owner never sees or revokes tenant A's keys", async () => {
    const own = await trpc("mutation", "dashboard.apiKeys.issue", { name: "A only", scopes: ["read"] }, { cookie: ownerA });
    const listB = await trpc("query", "dashboard.apiKeys.list", undefined, { cookie: ownerB });
    expect(listB.data.map((k: any) => k.id)).not.toContain(own.data.key.id);
    const revokeB = await trpc("mutation", "dashboard.apiKeys.revoke", { id: own.data.key.id }, { cookie: ownerB });
    expect(revokeB.status).toBe(404);
    const auditB = await trpc("query", "dashboard.auditLog.list", {}, { cookie: ownerB });
    expect(auditB.data.data.map((e: any) => e.target_id)).not.toContain(own.data.key.id);
  });
});

describe("cross-site requests", () => {
  it("a mutation from an untrusted Origin is refused before it runs", async () => {
    const res = await trpc("mutation", "dashboard.apiKeys.issue", { name: "csrf", scopes: ["read"] }, { cookie: ownerA, origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: "forbidden", message: "untrusted origin" } });
    const noOrigin = await trpc("mutation", "dashboard.apiKeys.issue", { name: "csrf", scopes: ["read"] }, { cookie: ownerA, origin: null });
    expect(noOrigin.status).toBe(403);
    const keys = await trpc("query", "dashboard.apiKeys.list", undefined, { cookie: ownerA });
    expect(keys.data.map((k: any) => k.name)).not.toContain("csrf");
  });
});

describe("sign-in rate limit", () => {
  it("is keyed on the client address: the 11th attempt in a minute from one address gets 429, another address still signs in", async () => {
    const email = await userInTenant(tenantA, "admin");
    // Addresses of this run only: the counts live in the database, which a rerun may share.
    const octet = () => 1 + Math.floor(Math.random() * 250);
    const [first, second] = [`198.51.${octet()}.${octet()}`, `203.0.${octet()}.${octet()}`];
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await signIn(email, { password: "wrong password", ip: first })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    expect((await signIn(email, { ip: first })).status).toBe(429);
    expect((await signIn(email, { ip: second })).status).toBe(200);
  });
});
