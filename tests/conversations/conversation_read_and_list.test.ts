// GET /conversations and GET /conversations/{id}: shapes, keyset pages, tenant isolation of the list
// (key, scope and another tenant's id: tests/api/every_operation_checks_key_scope_and_tenant.test.ts).
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

describe("GET /conversations/{id}", () => {
  it("returns the conversation", async () => {
    const { tenantId, key } = await tenantWithKey(["read"]);
    const conversation = await makeConversation(tenantId, "email");
    const res = await call("GET", `/conversations/${conversation.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(conversation);
  });

  it("404 for a malformed id (like any missing resource)", async () => {
    const { key } = await tenantWithKey(["read"]);
    const bad = await call("GET", "/conversations/not-a-uuid", { key });
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual(errorOf("not_found", "resource not found"));
  });
});

describe("GET /conversations", () => {
  let tenantId: string;
  let key: string;
  let expectedIds: string[];

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey(["read"]));
    const made = [];
    for (let i = 0; i < 23; i++) made.push(await makeConversation(tenantId, i % 2 ? "sms" : "webchat"));
    // Newest first, ties on created_at broken by id descending.
    expectedIds = made.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((c) => c.id);
    // Another tenant's rows never show up.
    const other = await tenantWithKey();
    await makeConversation(other.tenantId);
  });

  it("pages through every conversation newest first with next_cursor", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const res: any = await call("GET", `/conversations?limit=10${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["data", "has_more", "next_cursor"]);
      pages.push(res.body.data.length);
      seen.push(...res.body.data.map((c: { id: string }) => c.id));
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pages).toEqual([10, 10, 3]);
    expect(seen).toEqual(expectedIds);
  });

  it("defaults to 20 and caps at 100", async () => {
    const first = await call("GET", "/conversations", { key });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.has_more).toBe(true);
    const capped = await call("GET", "/conversations?limit=1000", { key });
    expect(capped.body.data).toHaveLength(23);
    expect(capped.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it("400 naming limit or cursor", async () => {
    const zero = await call("GET", "/conversations?limit=0", { key });
    expect(zero.status).toBe(400);
    expect(zero.body).toEqual(errorOf("bad_request", "invalid field 'limit': must be an integer from 1 to 100"));
    const other = await tenantWithKey();
    const theirs = await makeConversation(other.tenantId);
    const foreignCursor = await call("GET", `/conversations?cursor=${theirs.id}`, { key });
    expect(foreignCursor.status).toBe(400);
    expect(foreignCursor.body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
  });
});
