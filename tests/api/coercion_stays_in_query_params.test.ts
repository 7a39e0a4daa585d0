// Query strings are text, so numeric query parameters are converted before validation. That
// conversion must never reach bodies or the dashboard's tRPC endpoint, and never mutate schemas.
import { describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { call, dashboardCaller, tenantWithKey } from "../helpers/api";
import { listOfferingsInput } from "../../server/offerings/offerings.types";

describe("coercion", () => {
  it("query_limit_string_is_converted_for_rest_only", async () => {
    const { key, tenantId } = await tenantWithKey();
    expect((await call("GET", "/offerings?limit=5", { key })).status).toBe(200);

    // The schema itself is untouched by the REST call.
    expect(listOfferingsInput.safeParse({ limit: "5" }).success).toBe(false);
    expect(listOfferingsInput.safeParse({ limit: null }).success).toBe(false);

    // The dashboard transport (tRPC) still refuses a string for a number.
    const caller = dashboardCaller(tenantId);
    await expect(caller.offerings.list({ limit: "5" as unknown as number })).rejects.toBeInstanceOf(TRPCError);
    await expect(caller.offerings.list({ limit: 5 })).resolves.toMatchObject({ has_more: false });
  });

  it("body_null_number_is_not_turned_into_zero", async () => {
    const { key } = await tenantWithKey();
    const res = await call("POST", "/offerings", { key, body: { title: "x", price: null, price_currency: "USD" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^invalid field 'price'/);
  });
});
