// The list reads rows in prepared SQL that formats them itself (timestamps, decimals, dates); the
// create and PATCH answers come through the Prisma mapping. Both must give the same bytes.
import { beforeAll, describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";

let key: string;
beforeAll(async () => {
  ({ key } = await tenantWithKey());
});

describe("GET /offerings items", () => {
  it("list_item_is_identical_to_the_create_and_patch_answers", async () => {
    const bodies = [
      { title: "Tiny", price: "0.000000000000000000000000000001", price_currency: "USD" },
      { title: "Whole", price: 1500, price_currency: "AED", available_from: "2026-02-28", photos: ["https://example.com/a.jpg"] },
      {
        title: "Full",
        title_ar: "شقة",
        description: "Two rooms",
        description_ar: "غرفتان",
        price: "99999999999999999999999999999999999.5",
        price_currency: "EUR",
        address: "Marina",
        external_id: "ext-1",
        reference_number: "R-1",
        status: "reserved",
        attributes: { rooms: 2, tags: ["sea"], nested: { a: null } },
      },
    ];
    const created = [];
    for (const body of bodies) {
      const res = await call("POST", "/offerings", { key, body });
      expect(res.status).toBe(201);
      created.push(res.body);
    }
    const patched = await call("PATCH", `/offerings/${created[1].id}`, { key, body: { price: 0.25, available_from: null, attributes: { x: 1 } } });
    expect(patched.status).toBe(200);
    created[1] = patched.body;

    const list = await call("GET", "/offerings?limit=100", { key });
    expect(list.status).toBe(200);
    const byId = new Map(list.body.data.map((o: any) => [o.id, o]));
    for (const answer of created) expect(JSON.stringify(byId.get(answer.id))).toBe(JSON.stringify(answer));
    expect(created[0].price).toBe("0.000000000000000000000000000001");
    expect(created[1].price).toBe("0.25");
  });
});
