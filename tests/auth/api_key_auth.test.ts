import { describe, expect, it } from "vitest";
import { call, errorOf, newKey, tenantWithKey } from "../helpers/api";
import { dbOperationCount, openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { revokeApiKey } from "../../server/auth/api-keys";
import { OPERATOR } from "../../server/audit/record-audit";
import { lastUsedWritesSettled, resetLastUsedCoalescing } from "../../server/auth/authenticate";
import { handleRestRequest } from "../../server/http/rest-bridge";

const MALFORMED = errorOf("unauthorized", "missing or malformed Authorization header");
const UNKNOWN = errorOf("unauthorized", "unknown or revoked api key");
const hex48 = "0123456789abcdef".repeat(3);

describe("401 malformed Authorization header", () => {
  const cases: [string, Record<string, string>][] = [
    ["missing header", {}],
    ["other scheme", { authorization: `Basic xapk_live_${hex48}` }],
    ["bearer without token", { authorization: "Bearer" }],
    ["47 hex characters", { authorization: `Bearer xapk_live_${hex48.slice(1)}` }],
    ["49 hex characters", { authorization: `Bearer xapk_live_${hex48}0` }],
    ["upper-case hex", { authorization: `Bearer xapk_live_${hex48.toUpperCase()}` }],
    ["wrong prefix", { authorization: `Bearer sk_live_${hex48}` }],
    ["two tokens", { authorization: `Bearer xapk_live_${hex48} extra` }],
  ];
  it.each(cases)("401_malformed_token: %s", async (_name, headers) => {
    const res = await call("GET", "/offerings", { headers });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(MALFORMED);
  });

  it("401_malformed_token_makes_zero_database_queries", async () => {
    await openDatabase();
    await lastUsedWritesSettled(); // a background last-used write would count
    const before = dbOperationCount();
    for (const [, headers] of cases) await call("GET", "/appointments", { headers });
    expect(dbOperationCount()).toBe(before);
  });
});

describe("401 unknown or revoked key", () => {
  it("401_unknown_well_formed_key", async () => {
    const res = await call("GET", "/offerings", { key: `xapk_live_${hex48}` });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNKNOWN);
  });

  it("401_known_prefix_wrong_secret", async () => {
    const { key } = await tenantWithKey();
    const forged = key.slice(0, 22) + (key[22] === "a" ? "b" : "a") + key.slice(23);
    const res = await call("GET", "/offerings", { key: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNKNOWN);
  });

  it("401_revoked_key_on_the_next_request_and_revoke_is_idempotent", async () => {
    const { tenantId, keyId, key } = await tenantWithKey();
    expect((await call("GET", "/offerings", { key })).status).toBe(200);
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    const first = await revokeApiKey(db, keyId, OPERATOR);
    const res = await call("GET", "/offerings", { key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNKNOWN);
    const second = await revokeApiKey(db, keyId, OPERATOR);
    expect(second.revokedAt?.toISOString()).toBe(first.revokedAt?.toISOString());
    const audits = await db.auditLog.findMany({ where: { targetId: keyId }, orderBy: { createdAt: "asc" } });
    expect(audits.map((a) => a.action)).toEqual(["api_key.issued", "api_key.revoked"]);
  });

  it("401_response_never_echoes_the_key", async () => {
    const token = `xapk_live_${hex48}`;
    const res = await call("GET", "/offerings", { key: token });
    expect(res.text).not.toContain(hex48);
  });
});

describe("403 missing scope", () => {
  it("403_names_the_required_scope_with_no_fallback", async () => {
    const { key } = await tenantWithKey(["read"]);
    const res = await call("POST", "/offerings", { key, body: { title: "x", price: 1, price_currency: "USD" } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(errorOf("forbidden", "key missing required scope 'offerings:write'"));
  });

  it("403_read_scope_required_for_lists", async () => {
    const { key } = await tenantWithKey(["offerings:write"]);
    const res = await call("GET", "/offerings", { key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(errorOf("forbidden", "key missing required scope 'read'"));
  });
});

describe("authentication comes before the body", () => {
  /** A POST whose body starts and never finishes (a slow client holding the request open). */
  const postNeverEnding = (authorization: string) =>
    handleRestRequest(
      new Request("http://127.0.0.1/api/v1/offerings", {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"title":"slow'));
          },
        }),
        duplex: "half",
      } as RequestInit),
    );

  it("401_bad_key_is_answered_without_reading_a_body_that_never_finishes", async () => {
    const res = await postNeverEnding(`Bearer xapk_live_${hex48}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(UNKNOWN);
    const malformed = await postNeverEnding("Bearer nope");
    expect(malformed.status).toBe(401);
    expect(await malformed.json()).toEqual(MALFORMED);
  });

  it("403_missing_scope_is_answered_without_reading_a_body_that_never_finishes", async () => {
    const { key } = await tenantWithKey(["read"]);
    const res = await postNeverEnding(`Bearer ${key}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(errorOf("forbidden", "key missing required scope 'offerings:write'"));
  });

  it("401_comes_before_the_content_type_and_body_checks", async () => {
    const res = await call("POST", "/offerings", { key: `xapk_live_${hex48}`, rawBody: "{", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNKNOWN);
  });
});

describe("key storage", () => {
  it("key_format_58_chars_and_only_a_salted_hash_is_stored", async () => {
    const { tenantId, keyId, key } = await tenantWithKey();
    expect(key).toMatch(/^xapk_live_[0-9a-f]{48}$/);
    expect(key).toHaveLength(58);
    const row = await (await openDatabase()).prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(row.tenantId).toBe(tenantId);
    expect(row.prefix).toBe(key.slice(0, 22));
    expect(row.last4).toBe(key.slice(-4));
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(key.slice(22));
  });

  it("two_keys_with_the_same_secret_tail_hash_differently (per-key salt)", async () => {
    const { tenantId } = await tenantWithKey();
    const a = await newKey(tenantId);
    const b = await newKey(tenantId);
    const db = (await openDatabase()).prisma;
    const [ra, rb] = await Promise.all([a, b].map((k) => db.apiKey.findUniqueOrThrow({ where: { id: k.id } })));
    expect(ra.salt).not.toBe(rb.salt);
  });

  it("last_used_at_is_written_off_the_request_path", async () => {
    resetLastUsedCoalescing();
    const { keyId, key } = await tenantWithKey();
    const db = (await openDatabase()).prisma;
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).lastUsedAt).toBeNull();
    expect((await call("GET", "/offerings", { key })).status).toBe(200);
    let lastUsed: Date | null = null;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      await new Promise((r) => setTimeout(r, 20));
      lastUsed = (await db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).lastUsedAt;
    }
    expect(lastUsed).toBeInstanceOf(Date);
    // Coalesced: a second request within the minute does not write again.
    await call("GET", "/offerings", { key });
    await lastUsedWritesSettled(); // had the request written, its write has landed now
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).lastUsedAt?.getTime()).toBe(lastUsed!.getTime());
  });
});
