import { describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";

describe("smoke", () => {
  it("creates and lists an offering", async () => {
    const { key } = await tenantWithKey();
    const created = await call("POST", "/offerings", { key, body: { title: "A", price: 1500.5, price_currency: "USD" } });
    expect(created.status).toBe(201);
    expect(created.body.price).toBe("1500.5");
    const list = await call("GET", "/offerings?limit=5", { key });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
  });
});
