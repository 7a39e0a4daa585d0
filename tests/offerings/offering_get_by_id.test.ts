// GET /offerings/{id}: the list's item, by id; a soft-deleted offering is gone like a missing one.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { call, errorOf, tenantWithKey } from "../helpers/api";

const MISSING = "00000000-0000-4000-8000-000000000000";

describe("GET /offerings/{id}", () => {
  it("200_answers_the_offering_exactly_as_created_and_listed", async () => {
    const { key } = await tenantWithKey(["read", "offerings:write"]);
    const created = await call("POST", "/offerings", { key, body: { title: "Studio", price: "1500.5", price_currency: "AED", attributes: { floor: 3 } } });
    expect(created.status).toBe(201);
    const got = await call("GET", `/offerings/${created.body.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    const listed = await call("GET", "/offerings?limit=1", { key });
    expect(listed.body.data[0]).toEqual(got.body);
  });

  it("404_a_soft_deleted_offering_answers_the_bytes_of_a_missing_one", async () => {
    const { key } = await tenantWithKey(["read", "offerings:write"]);
    const created = await call("POST", "/offerings", { key, body: { title: "Gone soon", price: "10", price_currency: "AED" } });
    await (await openDatabase()).prisma.offering.update({ where: { id: created.body.id }, data: { deletedAt: new Date() } });
    const deleted = await call("GET", `/offerings/${created.body.id}`, { key });
    const missing = await call("GET", `/offerings/${MISSING}`, { key });
    expect(deleted.status).toBe(404);
    expect(deleted.body).toEqual(errorOf("not_found", "resource not found"));
    expect(deleted.text).toBe(missing.text);
  });
});
