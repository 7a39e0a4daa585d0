import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { startFakeCrm, type FakeCrm } from "./fake-crm-server";
import { connectCrm, TOKEN } from "./connect";

// The fake CRM listens on 127.0.0.1, which only development and tests may call.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

describe("POST /crm/create-record with the http driver", () => {
  let crm: FakeCrm;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    crm = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec_42" } });
    ({ key, tenantId } = await tenantWithKey(["crm:write"]));
    await connectCrm(tenantId, { provider: "http", baseUrl: `${crm.url}/api/`, mapping: { name: "full_name", phone: "mobile", budget: "deal_size" } });
  });
  afterAll(() => crm.close());

  it("posts the mapped fields with the bearer token and Idempotency-Key, and answers 201", async () => {
    const res = await call("POST", "/crm/create-record", {
      key,
      body: { object: "contacts", fields: { name: "Sara", phone: "+971501234567", budget: 1500000 }, idempotency_key: "lead-123" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      provider: "http",
      object: "contacts",
      crm_record_id: "rec_42",
      fields: { full_name: "Sara", mobile: "+971501234567", deal_size: 1500000 },
    });
    const got = crm.received.at(-1)!;
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/api/records/contacts");
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.headers["idempotency-key"]).toBe("lead-123");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.body).toEqual({ fields: { full_name: "Sara", mobile: "+971501234567", deal_size: 1500000 } });
    expect(res.text).not.toContain(TOKEN);
  });

  it("sends no Idempotency-Key header when none is given, and accepts a numeric record id", async () => {
    crm.respond({ kind: "json", status: 200, body: { id: 977 } });
    const res = await call("POST", "/crm/create-record", { key, body: { object: "leads", fields: { name: "Omar" } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ provider: "http", object: "leads", crm_record_id: "977", fields: { full_name: "Omar" } });
    const got = crm.received.at(-1)!;
    expect(got.path).toBe("/api/records/leads");
    expect(got.headers["idempotency-key"]).toBeUndefined();
  });

  it("refuses a canonical key without a mapping with a 400 naming it, before calling the CRM", async () => {
    const before = crm.received.length;
    const res = await call("POST", "/crm/create-record", { key, body: { object: "contacts", fields: { name: "Sara", email: "s@example.com" } } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'fields.email': no CRM mapping for canonical key 'email'"));
    expect(crm.received.length).toBe(before);
  });

  it.each([
    [{ fields: { name: "x" } }, "missing required field 'object'"],
    [{ object: "contacts" }, "missing required field 'fields'"],
    [{ object: "contacts", fields: {} }, "invalid field 'fields': must contain at least one field"],
    [{ object: "../admin", fields: { name: "x" } }, "invalid field 'object': must be 1 to 100 letters, digits, '_' or '-'"],
    [{ object: "contacts", fields: { name: { first: "x" } } }, "invalid field 'fields.name': Invalid input"],
    [
      { object: "contacts", fields: { name: "x" }, idempotency_key: "k".repeat(256) },
      "invalid field 'idempotency_key': Too big: expected string to have <=255 characters",
    ],
    [{ object: "contacts", fields: { name: "x" }, idempotency: "k" }, "unknown field 'idempotency'"],
  ])("refuses %j with a 400 naming the field", async (body, message) => {
    const res = await call("POST", "/crm/create-record", { key, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", message));
  });

  it("answers 409 when the tenant has no CRM connection", async () => {
    const other = await tenantWithKey(["crm:write"]);
    const res = await call("POST", "/crm/create-record", { key: other.key, body: { object: "contacts", fields: { name: "Sara" } } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(errorOf("conflict", "no CRM connection is configured for this tenant; set one up in the dashboard"));
  });
});
