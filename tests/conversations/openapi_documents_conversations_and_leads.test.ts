// The OpenAPI document describes every conversation, message and lead operation with real schemas.
import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";

const json = (op: any, status: string) => op.responses[status].content["application/json"].schema;

describe("OpenAPI: conversations and leads", () => {
  it("documents each operation with its request and response schemas", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const p = doc.paths;
    expect(json(p["/conversations"].get, "200")).toEqual({ $ref: "#/components/schemas/ConversationList" });
    expect(json(p["/conversations"].post, "201")).toEqual({ $ref: "#/components/schemas/Conversation" });
    expect(json(p["/conversations/{id}"].get, "200")).toEqual({ $ref: "#/components/schemas/Conversation" });
    expect(json(p["/conversations/{id}"].patch, "200")).toEqual({ $ref: "#/components/schemas/Conversation" });
    expect(json(p["/conversations/{id}/send"].post, "201")).toEqual({ $ref: "#/components/schemas/Message" });
    expect(json(p["/conversations/{id}/messages"].get, "200")).toEqual({ $ref: "#/components/schemas/MessageList" });
    expect(json(p["/leads"].get, "200")).toEqual({ $ref: "#/components/schemas/LeadList" });
    expect(json(p["/leads"].post, "201")).toEqual({ $ref: "#/components/schemas/Lead" });
    expect(json(p["/leads/{id}"].patch, "200")).toEqual({ $ref: "#/components/schemas/Lead" });
    expect(json(p["/leads/{id}/handoff"].post, "200")).toEqual({ $ref: "#/components/schemas/Lead" });

    const body = (op: any) => op.requestBody.content["application/json"].schema;
    expect(body(p["/conversations"].post).required).toEqual(["channel", "customer_identifier"]);
    expect(body(p["/conversations"].post).properties.channel.enum).toEqual(["voice", "sms", "whatsapp", "webchat", "email"]);
    expect(body(p["/conversations/{id}"].patch).properties.status.enum).toEqual(["open", "closed"]);
    expect(body(p["/conversations/{id}/send"].post).properties.body).toMatchObject({ type: "string", minLength: 1, maxLength: 4096 });
    expect(body(p["/leads"].post).required).toEqual(["conversation_id"]);
    expect(body(p["/leads/{id}"].patch).properties.status.enum).toEqual(["new", "qualified", "booked", "converted", "lost"]);
    expect(body(p["/leads/{id}/handoff"].post).properties.reason).toMatchObject({ type: "string", maxLength: 1000 });
    expect(p["/leads"].get.parameters.map((x: any) => x.name)).toEqual(["limit", "cursor", "stale_for_days"]);

    for (const op of [p["/conversations/{id}/send"].post, p["/leads/{id}"].patch, p["/leads/{id}/handoff"].post]) {
      expect(json(op, "409")).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
    }
    const s = doc.components.schemas;
    expect(Object.keys(s.Conversation.properties).sort()).toEqual([
      "attributes",
      "channel",
      "closed_at",
      "created_at",
      "customer_identifier",
      "customer_identifier_kind",
      "customer_name",
      "id",
      "last_message_at",
      "message_count",
      "status",
      "summary",
      "updated_at",
    ]);
    expect(Object.keys(s.Message.properties).sort()).toEqual(["author", "body", "conversation_id", "created_at", "direction", "id", "status"]);
    expect(s.Lead.required).toEqual(expect.arrayContaining(["id", "conversation_id", "status", "qualified_at", "handoff_requested_at"]));
  });
});
