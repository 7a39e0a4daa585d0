import { describe, expect, it } from "vitest";
import { getOpenApiDocument } from "../../server/http/openapi";

describe("OpenAPI: POST /crm/create-record", () => {
  const doc = getOpenApiDocument() as any;
  const op = doc.paths["/crm/create-record"]?.post;

  it("documents the request body, the 201 record and the 409", () => {
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(op["x-required-scopes"]).toEqual(["crm:write"]);
    const body = op.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(["object", "fields"]);
    expect(Object.keys(body.properties)).toEqual(["object", "fields", "idempotency_key"]);
    expect(body.properties.idempotency_key.maxLength).toBe(255);
    expect(body.additionalProperties).toBe(false);
    expect(op.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CrmRecord" });
    expect(Object.keys(op.responses).sort()).toEqual(["201", "400", "401", "403", "404", "409", "413", "429", "500", "503"]);
    const record = doc.components.schemas.CrmRecord;
    expect(record.required).toEqual(["provider", "object", "crm_record_id", "fields"]);
    expect(record.properties.provider.enum).toEqual(["http", "hubspot"]);
    expect(record.properties.fields.additionalProperties).toBeTruthy();
  });

  it("exposes none of the dashboard's connection procedures", () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/crm"))).toEqual(["/crm/create-record"]);
    expect(JSON.stringify(doc)).not.toMatch(/has_credentials|credentials_encrypted/);
  });
});
