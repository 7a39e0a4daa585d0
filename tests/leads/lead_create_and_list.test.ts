// POST /leads and GET /leads: shape, lead.created, foreign-key visibility, keyset pages, auth.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";

const LEAD_KEYS = [
  "attributes",
  "conversation_id",
  "created_at",
  "customer_email",
  "customer_name",
  "customer_phone",
  "handoff_requested_at",
  "id",
  "notes",
  "offering_id",
  "qualified_at",
  "status",
  "updated_at",
].sort();

async function makeOffering(key: string) {
  return (await call("POST", "/offerings", { key, body: { title: "Studio", price: 1000, price_currency: "AED" } })).body;
}

describe("POST /leads", () => {
  it("creates a `new` lead (201) and emits lead.created", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const offering = await makeOffering(key);
    const res = await call("POST", "/leads", {
      key,
      body: {
        conversation_id: conversation.id,
        offering_id: offering.id,
        customer_name: "Ali Reza",
        customer_phone: "+971501234567",
        customer_email: "ali@example.com",
        attributes: { budget: 900000, gone: null },
        notes: "Prefers mornings",
      },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(LEAD_KEYS);
    expect(res.body).toMatchObject({
      conversation_id: conversation.id,
      offering_id: offering.id,
      status: "new",
      customer_name: "Ali Reza",
      attributes: { budget: 900000 },
      notes: "Prefers mornings",
      qualified_at: null,
      handoff_requested_at: null,
    });
    expect(await eventsOf(tenantId, "lead.created")).toEqual([{ type: "lead.created", data: { object: res.body } }]);
  });

  it("404s a conversation or offering of another tenant exactly like a missing one, and stores nothing", async () => {
    const { tenantId, key } = await tenantWithKey();
    const other = await tenantWithKey();
    const theirConversation = await makeConversation(other.tenantId);
    const theirOffering = await makeOffering(other.key);
    const mine = await makeConversation(tenantId);

    const foreignConversation = await call("POST", "/leads", { key, body: { conversation_id: theirConversation.id } });
    const missingConversation = await call("POST", "/leads", { key, body: { conversation_id: "00000000-0000-4000-8000-000000000000" } });
    const foreignOffering = await call("POST", "/leads", { key, body: { conversation_id: mine.id, offering_id: theirOffering.id } });
    for (const res of [foreignConversation, missingConversation, foreignOffering]) {
      expect(res.status).toBe(404);
      expect(res.text).toBe(missingConversation.text);
    }
    expect(missingConversation.body).toEqual(errorOf("not_found", "resource not found"));
    expect(await (await tenantDb(tenantId)).lead.count()).toBe(0);
    expect(await eventsOf(tenantId, "lead.created")).toEqual([]);
  });

  it.each([
    [{}, "missing required field 'conversation_id'"],
    [{ conversation_id: "nope" }, "invalid field 'conversation_id': must be a uuid"],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000", status: "qualified" }, "unknown field 'status'"],
    [{ conversation_id: "00000000-0000-4000-8000-000000000000", customer_email: "not-an-email" }, "invalid field 'customer_email': must be an email address"],
  ])("400 for %j", async (body, message) => {
    const { key } = await tenantWithKey();
    const res = await call("POST", "/leads", { key, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", message));
  });
});

describe("GET /leads", () => {
  let key: string;
  let expectedIds: string[];

  beforeAll(async () => {
    const t = await tenantWithKey();
    key = t.key;
    const conversation = await makeConversation(t.tenantId);
    const made = [];
    for (let i = 0; i < 12; i++) made.push((await call("POST", "/leads", { key, body: { conversation_id: conversation.id, notes: `lead ${i}` } })).body);
    expectedIds = made.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((l) => l.id);
    const other = await tenantWithKey();
    await call("POST", "/leads", { key: other.key, body: { conversation_id: (await makeConversation(other.tenantId)).id } });
  });

  it("pages through the tenant's leads newest first", async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await call("GET", `/leads?limit=5${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.status).toBe(200);
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((l: { id: string }) => l.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(sizes).toEqual([5, 5, 2]);
    expect(seen).toEqual(expectedIds);
  });

  it("400 naming limit, cursor or stale_for_days", async () => {
    expect((await call("GET", "/leads?limit=abc", { key })).body).toEqual(errorOf("bad_request", "invalid field 'limit': must be an integer from 1 to 100"));
    expect((await call("GET", "/leads?cursor=zzz", { key })).body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
    for (const bad of ["0", "-3", "1.5", "abc", "36501"]) {
      const res = await call("GET", `/leads?stale_for_days=${bad}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorOf("bad_request", "invalid field 'stale_for_days': must be an integer from 1 to 36500"));
    }
  });
});
