// GET /appointments/{id}: the appointment as booked and as listed, and after a reschedule.
import { describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";

describe("GET /appointments/{id}", () => {
  it("200_answers_the_appointment_as_booked_and_as_patched_then_404_for_a_missing_one", async () => {
    const { key } = await tenantWithKey(["read", "appointments:write"]);
    const booked = await call("POST", "/appointments", {
      key,
      body: { customer_name: "Rana", customer_phone: "+971501112233", scheduled_start: "2026-12-01T09:00:00.000Z", scheduled_end: "2026-12-01T09:30:00.000Z" },
    });
    expect(booked.status).toBe(201);
    const got = await call("GET", `/appointments/${booked.body.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(booked.body);
    expect((await call("GET", "/appointments?limit=1", { key })).body.data[0]).toEqual(got.body);
    const moved = await call("PATCH", `/appointments/${booked.body.id}`, {
      key,
      body: { scheduled_start: "2026-12-02T09:00:00.000Z", scheduled_end: "2026-12-02T09:30:00.000Z" },
    });
    expect(moved.status).toBe(200);
    expect((await call("GET", `/appointments/${booked.body.id}`, { key })).body).toEqual(moved.body);
    const missing = await call("GET", "/appointments/00000000-0000-4000-8000-000000000000", { key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(errorOf("not_found", "resource not found"));
  });
});
