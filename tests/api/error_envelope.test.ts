import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";

let key: string;
beforeAll(async () => {
  ({ key } = await tenantWithKey());
});

describe("routing errors", () => {
  it("404_unknown_path_in_the_envelope", async () => {
    const res = await call("GET", "/nope", { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorOf("not_found", "no endpoint GET /api/v1/nope"));
  });

  it("404_method_the_path_does_not_have", async () => {
    const res = await call("DELETE", "/offerings", { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorOf("not_found", "no endpoint DELETE /api/v1/offerings"));
  });

  it("404_unknown_path_needs_no_key", async () => {
    const res = await call("GET", "/nope");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("body errors", () => {
  const post = (rawBody: string | undefined, headers: Record<string, string> = { "content-type": "application/json" }) =>
    call("POST", "/offerings", { key, rawBody, headers });

  it("400_malformed_json", async () => {
    const res = await post('{"title": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "request body is not valid JSON"));
  });

  it("400_missing_body", async () => {
    const res = await post(undefined);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "request body is required (a JSON object)"));
  });

  it("400_non_json_content_type", async () => {
    const res = await post("title=x", { "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "content-type must be application/json (got 'application/x-www-form-urlencoded')"));
  });

  it("400_missing_content_type", async () => {
    const res = await post('{"title":"x"}', {});
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^content-type must be application\/json/);
  });

  it("accepts_json_with_charset", async () => {
    const res = await post(JSON.stringify({ title: "x", price: 1, price_currency: "USD" }), { "content-type": "application/json; charset=utf-8" });
    expect(res.status).toBe(201);
  });

  it("413_body_over_1_MiB_with_code_bad_request", async () => {
    const res = await post(JSON.stringify({ title: "x", description: "a".repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errorOf("bad_request", "request body exceeds 1 MiB"));
  });

  it("400_type_mismatch_is_not_coerced_in_bodies", async () => {
    const res = await post(JSON.stringify({ title: 5, price: 1, price_currency: "USD" }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^invalid field 'title'/);
  });
});

describe("request id", () => {
  it("generated_when_absent_and_echoed_when_valid", async () => {
    const generated = await call("GET", "/offerings", { key });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await call("GET", "/offerings", { key, headers: { "x-request-id": "req_abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("req_abc-123");
    const invalid = await call("GET", "/nope", { headers: { "x-request-id": "bad id with spaces" } });
    expect(invalid.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
