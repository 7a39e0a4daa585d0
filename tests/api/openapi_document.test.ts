import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { handleAgentRequest } from "../../server/http/agent-rest";
import { handleRestRequest } from "../../server/http/rest-bridge";
import { SCOPES } from "../../server/auth/principal";

describe("GET /api/v1/openapi.json", () => {
  it("serves_openapi_3_1_with_version_0_1_0_and_bearer_security", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.version).toBe("0.1.0");
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("every_operation_has_a_summary_a_description_an_operation_id_and_declared_tags_and_the_document_a_licence", async () => {
    for (const path of ["/api/v1/openapi.json", "/api/agent/v1/openapi.json"]) {
      // Over HTTP when the suite runs against a server (API_BASE_URL), else in-process.
      const request = new Request(`${process.env.API_BASE_URL ?? "http://127.0.0.1"}${path}`);
      const doc = await (process.env.API_BASE_URL
        ? await fetch(request)
        : await (path.startsWith("/api/v1") ? handleRestRequest : handleAgentRequest)(request)
      ).json();
      expect(doc.info.license, path).toEqual({
        name: "Proprietary: use under your agreement with the service's operator",
        identifier: "LicenseRef-Proprietary",
      });
      expect(doc.info.contact, path).toEqual({ name: "The API support of this service's operator" });
      const declared = (doc.tags as { name: string; description: string }[]).map((t) => t.name);
      for (const tag of doc.tags) expect(tag.description.length, `${path} tag ${tag.name}`).toBeGreaterThan(10);
      const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
        Object.entries(item).map(([m, op]) => ({ name: `${m} ${p}`, op })),
      );
      expect(operations.length).toBeGreaterThanOrEqual(path.startsWith("/api/v1") ? 20 : 9);
      const ids = new Set<string>();
      for (const { name, op } of operations) {
        expect(op.summary, `${path} ${name} summary`).toMatch(/\S/);
        expect(op.description, `${path} ${name} description`).toMatch(/\S/);
        expect(op.operationId, `${path} ${name} operationId`).toMatch(/^[A-Za-z0-9_-]+$/);
        ids.add(op.operationId);
        expect(op.tags.length, `${path} ${name} tags`).toBeGreaterThan(0);
        for (const tag of op.tags) expect(declared, `${path} ${name} tag ${tag}`).toContain(tag);
      }
      expect(ids.size, `${path}: operationIds are unique`).toBe(operations.length);
    }
  });

  it("every_operation_documents_the_error_envelope_and_429_headers", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(6);
    for (const { path, method, op } of operations) {
      // Each names the scopes that let a key call it: one, or `read` or `webhooks:write` for the webhook endpoints' reads
      // (the walk in every_operation_checks_key_scope_and_tenant proves they are the ones checked).
      expect(op.security).toEqual([{ bearerAuth: [] }]);
      if (path.startsWith("/webhook-endpoints") && method === "get") expect(op["x-required-scopes"]).toEqual(["read", "webhooks:write"]);
      else expect(op["x-required-scopes"]).toEqual([expect.toBeOneOf([...SCOPES])]);
      for (const status of ["400", "401", "403", "429", "500"]) {
        expect(op.responses[status].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
      }
      expect(Object.keys(op.responses["429"].headers)).toEqual(
        expect.arrayContaining(["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]),
      );
    }
    expect(doc.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual([
      "unauthorized",
      "forbidden",
      "rate_limited",
      "bad_request",
      "not_found",
      "conflict",
      "internal_error",
      "outcome_unknown",
    ]);
  });

  it("documents_creates_as_201_and_real_schemas", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(doc.paths["/offerings"].post.responses["201"]).toBeDefined();
    expect(doc.paths["/offerings"].post.responses["200"]).toBeUndefined();
    expect(doc.paths["/appointments"].post.responses["201"]).toBeDefined();
    expect(doc.paths["/offerings/{id}"].patch.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "id", in: "path", required: true })]),
    );
    const listParams = doc.paths["/appointments"].get.parameters.map((p: any) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(["limit", "cursor"]));
    expect(doc.components.schemas.Offering.required).toEqual(expect.arrayContaining(["id", "title", "price", "price_currency", "photos"]));
  });

  it("bearer_applies_globally_and_no_schema_describes_a_body_the_api_never_sends", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith("error."))).toEqual([]);
    for (const item of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        expect(op.responses["503"].headers["Retry-After"]).toBeDefined();
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          if (Number(status) >= 400) expect(response.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
        }
      }
    }
    expect(doc.paths["/appointments/{id}"].patch.responses["409"]).toBeDefined();
  });
});
