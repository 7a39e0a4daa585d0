// GET /api/v1/conversations/{id}/calls: newest first, keyset-paginated like every list, and the
// operation is in the OpenAPI document (its key, scope and tenant checks: tests/api/every_operation_checks_key_scope_and_tenant.test.ts).
import { beforeAll, describe, expect, it } from "vitest";
import { applyCallReport } from "../../server/calls/calls.service";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";

describe("GET /conversations/{id}/calls", () => {
  let tenantId: string;
  let key: string;
  let conversationId: string;
  const starts = [0, 1, 2, 3, 4].map((m) => new Date(Date.UTC(2026, 10, 21, 10, m)));

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey(["read"]));
    const db = await tenantDb(tenantId);
    const phone = uniquePhone();
    for (const [i, startedAt] of starts.entries()) {
      const result = await applyCallReport(db, {
        provider: "retell",
        providerCallId: `call_list_${process.pid}_${i}`,
        direction: "inbound",
        customerNumber: phone,
        startedAt,
        ended: { at: new Date(startedAt.getTime() + 30_000), answered: i % 2 === 0, reason: i % 2 === 0 ? "user_hangup" : "dial_no_answer" },
      });
      conversationId = result.conversation.id;
    }
  });

  it("200_newest_first_in_pages_of_limit_until_has_more_is_false", async () => {
    const first = await call("GET", `/conversations/${conversationId}/calls?limit=2`, { key });
    expect(first.status).toBe(200);
    expect(first.body.data.map((c: { started_at: string; status: string }) => [c.started_at, c.status])).toEqual([
      [starts[4].toISOString(), "completed"],
      [starts[3].toISOString(), "missed"],
    ]);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: first.body.data[1].id });
    expect(first.body.data[0]).toEqual({
      id: expect.any(String),
      conversation_id: conversationId,
      provider: "retell",
      provider_call_id: `call_list_${process.pid}_4`,
      direction: "inbound",
      status: "completed",
      started_at: starts[4].toISOString(),
      answered_at: starts[4].toISOString(),
      ended_at: new Date(starts[4].getTime() + 30_000).toISOString(),
      duration_seconds: 30,
      end_reason: "user_hangup",
      recording_url: null,
      summary: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const second = await call("GET", `/conversations/${conversationId}/calls?limit=2&cursor=${first.body.next_cursor}`, { key });
    const third = await call("GET", `/conversations/${conversationId}/calls?limit=2&cursor=${second.body.next_cursor}`, { key });
    expect(second.body.data.map((c: { started_at: string }) => c.started_at)).toEqual([starts[2].toISOString(), starts[1].toISOString()]);
    expect(third.body).toEqual({ data: [expect.objectContaining({ started_at: starts[0].toISOString() })], next_cursor: null, has_more: false });
  });

  it("400_a_cursor_that_is_not_a_call_of_this_conversation_names_cursor", async () => {
    const res = await call("GET", `/conversations/${conversationId}/calls?cursor=${conversationId}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
  });

  it("documented_in_the_openapi_document_with_the_call_schema_and_an_example", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const operation = doc.paths["/conversations/{id}/calls"].get;
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["cursor", "id", "limit"]);
    const ok = operation.responses["200"].content["application/json"];
    expect(ok.schema.$ref).toBe("#/components/schemas/CallList");
    expect(ok.example.data[0]).toMatchObject({ provider: "retell", status: "completed" });
    expect(Object.keys(doc.components.schemas.Call.properties)).toEqual([
      "id",
      "conversation_id",
      "provider",
      "provider_call_id",
      "direction",
      "status",
      "started_at",
      "answered_at",
      "ended_at",
      "duration_seconds",
      "end_reason",
      "recording_url",
      "summary",
      "created_at",
      "updated_at",
    ]);
  });
});
