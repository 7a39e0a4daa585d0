// GET /leads/{id}: the lead as created and as listed.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

describe("GET /leads/{id}", () => {
  it("200_answers_the_lead_exactly_as_created_and_listed_then_404_for_a_missing_one", async () => {
    const { tenantId, key } = await tenantWithKey(["read", "leads:write"]);
    const conversation = await makeConversation(tenantId);
    const created = await call("POST", "/leads", { key, body: { conversation_id: conversation.id, attributes: { budget: 900000 } } });
    expect(created.status).toBe(201);
    const got = await call("GET", `/leads/${created.body.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    expect((await call("GET", "/leads?limit=1", { key })).body.data[0]).toEqual(got.body);
    const missing = await call("GET", "/leads/00000000-0000-4000-8000-000000000000", { key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(errorOf("not_found", "resource not found"));
  });
});
