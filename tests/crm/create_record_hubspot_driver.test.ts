import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { startFakeCrm, type FakeCrm } from "./fake-crm-server";
import { connectCrm, TOKEN } from "./connect";

// The fake CRM listens on 127.0.0.1, which only development and tests may call.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

const HUBSPOT_OBJECT = { id: "51", properties: { firstname: "Sara" }, createdAt: "2026-11-21T10:00:00Z", archived: false };

describe("POST /crm/create-record with the hubspot driver", () => {
  let crm: FakeCrm;

  beforeAll(async () => {
    crm = await startFakeCrm({ kind: "json", status: 201, body: HUBSPOT_OBJECT });
  });
  afterAll(() => crm.close());

  it("creates through the CRM v3 objects API with { properties } and the private-app token", async () => {
    const { key, tenantId } = await tenantWithKey(["crm:write"]);
    await connectCrm(tenantId, { provider: "hubspot", baseUrl: crm.url, mapping: { name: "firstname", phone: "phone" } });
    crm.respond({ kind: "json", status: 201, body: HUBSPOT_OBJECT });
    const res = await call("POST", "/crm/create-record", { key, body: { object: "contacts", fields: { name: "Sara", phone: "+971501234567" } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ provider: "hubspot", object: "contacts", crm_record_id: "51", fields: { firstname: "Sara", phone: "+971501234567" } });
    const got = crm.received.at(-1)!;
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/crm/v3/objects/contacts");
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.headers["idempotency-key"]).toBeUndefined();
    expect(got.body).toEqual({ properties: { firstname: "Sara", phone: "+971501234567" } });
  });

  it("forwards the idempotency key as an upsert keyed by the unique property mapped for idempotency_key", async () => {
    const { key, tenantId } = await tenantWithKey(["crm:write"]);
    await connectCrm(tenantId, { provider: "hubspot", baseUrl: crm.url, mapping: { name: "firstname", idempotency_key: "xapk_request_id" } });
    crm.respond({ kind: "json", status: 200, body: { status: "COMPLETE", results: [{ ...HUBSPOT_OBJECT, id: "77", new: true }] } });
    const body = { object: "contacts", fields: { name: "Sara" }, idempotency_key: "lead-9f2" };
    const first = await call("POST", "/crm/create-record", { key, body });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ provider: "hubspot", object: "contacts", crm_record_id: "77", fields: { firstname: "Sara" } });
    const got = crm.received.at(-1)!;
    expect(got.path).toBe("/crm/v3/objects/contacts/batch/upsert");
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.body).toEqual({
      inputs: [{ idProperty: "xapk_request_id", id: "lead-9f2", properties: { firstname: "Sara", xapk_request_id: "lead-9f2" } }],
    });
    // A retry sends the very same upsert, so HubSpot answers with the same record.
    const retry = await call("POST", "/crm/create-record", { key, body });
    expect(retry.body.crm_record_id).toBe("77");
    expect(crm.received.at(-1)!.body).toEqual(got.body);
  });

  it("refuses an idempotency key with a 400 when no unique property is mapped (it could not be honoured)", async () => {
    const { key, tenantId } = await tenantWithKey(["crm:write"]);
    await connectCrm(tenantId, { provider: "hubspot", baseUrl: crm.url, mapping: { name: "firstname" } });
    const before = crm.received.length;
    const res = await call("POST", "/crm/create-record", { key, body: { object: "contacts", fields: { name: "Sara" }, idempotency_key: "k1" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      errorOf(
        "bad_request",
        "invalid field 'idempotency_key': no CRM mapping for canonical key 'idempotency_key' (HubSpot dedupes by a unique property; map 'idempotency_key' to it)",
      ),
    );
    expect(crm.received.length).toBe(before);
  });
});
