import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { openDatabase } from "../../server/db/database";

const NOT_FOUND = errorOf("not_found", "resource not found");
let key: string;
let tenantId: string;

async function newOffering(body: Record<string, unknown> = {}) {
  const res = await call("POST", "/offerings", {
    key,
    body: { title: "Villa", price: 100, price_currency: "USD", attributes: { bedrooms: 3, pool: true }, description: "Nice", ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}
const patch = (id: string, body: unknown, k = key) => call("PATCH", `/offerings/${id}`, { key: k, body });

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
});

describe("POST /offerings", () => {
  it("201_with_defaults_and_the_full_shape", async () => {
    const res = await call("POST", "/offerings", { key, body: { title: "Studio", price: 1500.5, price_currency: "AED" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(res.body).sort()).toEqual([
      "address",
      "attributes",
      "available_from",
      "created_at",
      "description",
      "description_ar",
      "external_id",
      "id",
      "photos",
      "price",
      "price_currency",
      "reference_number",
      "status",
      "title",
      "title_ar",
      "updated_at",
    ]);
    expect(res.body).toMatchObject({
      title: "Studio",
      price: "1500.5",
      price_currency: "AED",
      photos: [],
      attributes: {},
      status: "active",
      external_id: null,
      available_from: null,
      description: null,
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("400_missing_required_field_named", async () => {
    const res = await call("POST", "/offerings", { key, body: { title: "x", price: 1 } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "missing required field 'price_currency'"));
  });

  it("emits_offering_created_in_the_outbox", async () => {
    const offering = await newOffering();
    const events = await (await openDatabase()).prisma.event.findMany({ where: { tenantId, type: "offering.created" } });
    expect(events.some((e) => (e.data as any).object.id === offering.id)).toBe(true);
  });
});

describe("PATCH /offerings/{id} rules", () => {
  it("rule1_400_when_no_updatable_field", async () => {
    const o = await newOffering();
    const res = await patch(o.id, {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "request body must contain at least one updatable field"));
  });

  it("rule2_null_clears_a_nullable_field", async () => {
    const o = await newOffering({ address: "Marina", external_id: "ext-1" });
    const res = await patch(o.id, { address: null, external_id: null });
    expect(res.status).toBe(200);
    expect(res.body.address).toBeNull();
    expect(res.body.external_id).toBeNull();
    expect(res.body.description).toBe("Nice");
  });

  it("rule2_null_on_a_non_nullable_field_is_400_naming_it", async () => {
    const o = await newOffering();
    const res = await patch(o.id, { title: null });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
    expect(res.body.error.message).toMatch(/^invalid field 'title': /);
  });

  it("rule3_attributes_shallow_merge_overwrite_add_delete_keep", async () => {
    const o = await newOffering({ attributes: { bedrooms: 3, pool: true, view: "sea" } });
    const res = await patch(o.id, { attributes: { bedrooms: 4, area: 120, pool: null } });
    expect(res.status).toBe(200);
    expect(res.body.attributes).toEqual({ bedrooms: 4, area: 120, view: "sea" });
  });

  it("rule3_nested_objects_are_replaced_not_deep_merged", async () => {
    const o = await newOffering({ attributes: { geo: { lat: 1, lng: 2 } } });
    const res = await patch(o.id, { attributes: { geo: { lat: 5 } } });
    expect(res.body.attributes).toEqual({ geo: { lat: 5 } });
  });

  it("rule4_soft_deleted_offering_is_404", async () => {
    const o = await newOffering();
    await (await openDatabase()).prisma.offering.update({ where: { id: o.id }, data: { deletedAt: new Date() } });
    const res = await patch(o.id, { title: "again" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ["title empty", { title: "" }, "title"],
    ["title 501 chars", { title: "x".repeat(501) }, "title"],
    ["title_ar 501 chars", { title_ar: "x".repeat(501) }, "title_ar"],
    ["description 10001 chars", { description: "x".repeat(10001) }, "description"],
    ["external_id 121 chars", { external_id: "x".repeat(121) }, "external_id"],
    ["reference_number 121 chars", { reference_number: "x".repeat(121) }, "reference_number"],
    ["address 501 chars", { address: "x".repeat(501) }, "address"],
    ["status 41 chars", { status: "x".repeat(41) }, "status"],
    ["negative price", { price: -1 }, "price"],
    ["price string with exponent", { price: "1e5" }, "price"],
    ["price string negative", { price: "-5" }, "price"],
    ["lower-case currency", { price_currency: "usd" }, "price_currency"],
    ["21 photos", { photos: Array.from({ length: 21 }, (_, i) => `https://x.test/${i}.jpg`) }, "photos"],
    ["photo not a uri", { photos: ["not a url"] }, "photos[0]"],
    ["photo 2049 chars", { photos: [`https://x.test/${"a".repeat(2040)}`] }, "photos[0]"],
    ["available_from not a date", { available_from: "2026-13-01" }, "available_from"],
    ["available_from impossible date", { available_from: "2026-02-30" }, "available_from"],
    ["available_from with time", { available_from: "2026-02-01T00:00:00Z" }, "available_from"],
    ["attributes not an object", { attributes: [1, 2] }, "attributes"],
    ["title with NUL", { title: "a\u0000b" }, "title"],
  ];
  it.each(invalid)("rule5_400_names_the_field: %s", async (_name, body, field) => {
    const o = await newOffering();
    const res = await patch(o.id, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
    expect(res.body.error.message).toContain(`'${field}'`);
  });

  it.each(["assigned_user_id", "deleted_at", "metadata"])("rule6_%s_cannot_be_updated", async (field) => {
    const o = await newOffering();
    const res = await patch(o.id, { title: "ok", [field]: field === "metadata" ? {} : null });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", `field '${field}' cannot be updated`));
  });

  it("400_unknown_field_named", async () => {
    const o = await newOffering();
    const res = await patch(o.id, { titel: "typo" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "unknown field 'titel'"));
  });

  it("400_id_in_the_body", async () => {
    const o = await newOffering();
    const other = await newOffering();
    const res = await patch(o.id, { id: other.id, title: "x" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("'id'");
  });

  it.each([
    ["null", "null"],
    ["array", "[1]"],
    ["string", '"title"'],
    ["number", "5"],
  ])("400_non_object_body: %s", async (_name, raw) => {
    const o = await newOffering();
    const res = await call("PATCH", `/offerings/${o.id}`, { key, rawBody: raw, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "request body must be a JSON object"));
  });
});

describe("price forms", () => {
  it.each([
    [1500.5, "1500.5"],
    [0, "0"],
    [100, "100"],
    [1e21, "1000000000000000000000"],
    ["12345678901234567890.123456789012345678", "12345678901234567890.123456789012345678"],
    ["0.10", "0.1"],
    ["007", "7"],
  ])("price %j is returned as %s", async (input, expected) => {
    const o = await newOffering();
    const res = await patch(o.id, { price: input });
    expect(res.status).toBe(200);
    expect(res.body.price).toBe(expected);
  });

  it("string_price_keeps_precision_a_number_would_lose", async () => {
    const o = await newOffering();
    const res = await patch(o.id, { price: "9007199254740993.01" });
    expect(res.body.price).toBe("9007199254740993.01");
  });
});

describe("PATCH success", () => {
  it("200_updates_fields_and_emits_offering_updated_with_previous_attributes", async () => {
    const o = await newOffering();
    const res = await patch(o.id, { title: "Bigger villa", available_from: "2026-12-01", photos: ["https://cdn.test/1.jpg"] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: o.id, title: "Bigger villa", available_from: "2026-12-01", photos: ["https://cdn.test/1.jpg"] });
    expect(res.body.created_at).toBe(o.created_at);
    const events = await (await openDatabase()).prisma.event.findMany({ where: { tenantId, type: "offering.updated" } });
    const mine = events.find((e) => (e.data as any).object.id === o.id)!;
    expect((mine.data as any).previous_attributes).toEqual({ title: "Villa", available_from: null, photos: [] });
  });
});

describe("404 existence leak", () => {
  // Another tenant's id: tests/api/every_operation_checks_key_scope_and_tenant.test.ts.
  it("404_missing_and_malformed_ids_are_byte_identical", async () => {
    const missing = await patch("00000000-0000-4000-8000-000000000000", { title: "x" });
    const malformed = await patch("not-a-uuid", { title: "x" });
    expect(missing.status).toBe(404);
    expect(malformed.status).toBe(404);
    expect(malformed.text).toBe(missing.text);
  });
});
