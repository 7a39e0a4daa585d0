// Issue 13, finding 5 on appointments: a timestamp in year 0000 (PostgreSQL has no year 0) or past
// 9999 reached the database and answered 500. Now the UTC instant must fall in 0001..9999; any
// offset is applied first, so an in-range local time that lands outside it in UTC is refused too.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";

let key: string;
const START = "2026-12-01T10:00:00.000Z";
const END = "2026-12-01T11:00:00.000Z";
const book = (body: Record<string, unknown>) =>
  call("POST", "/appointments", {
    key,
    body: { customer_name: "Layla", customer_phone: "+971501234567", scheduled_start: START, scheduled_end: END, ...body },
  });
const outOfRange = (field: string) => errorOf("bad_request", `invalid field '${field}': must be between years 0001 and 9999 (in UTC)`);

beforeAll(async () => {
  ({ key } = await tenantWithKey());
});

describe("appointment timestamps", () => {
  it("400_scheduled_start_in_year_0000_names_the_field", async () => {
    const res = await book({ scheduled_start: "0000-06-01T10:00:00Z" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(outOfRange("scheduled_start"));
  });

  it("400_an_offset_that_moves_the_instant_outside_0001_to_9999", async () => {
    expect((await book({ scheduled_start: "0001-01-01T00:30:00+01:00" })).body).toEqual(outOfRange("scheduled_start"));
    expect((await book({ scheduled_end: "9999-12-31T23:00:00-05:00" })).body).toEqual(outOfRange("scheduled_end"));
    // More than four digits of year is not ISO 8601 as the API takes it.
    expect((await book({ scheduled_end: "10000-01-01T00:00:00Z" })).body).toEqual(
      errorOf("bad_request", "invalid field 'scheduled_end': must be an ISO 8601 date-time"),
    );
  });

  it("201_the_first_and_last_storable_instants", async () => {
    const res = await book({ scheduled_start: "0001-01-01T00:00:00Z", scheduled_end: "9999-12-31T23:59:59.999Z" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ scheduled_start: "0001-01-01T00:00:00.000Z", scheduled_end: "9999-12-31T23:59:59.999Z" });
  });

  it("400_a_patch_to_year_0000_and_the_appointment_is_unchanged", async () => {
    const created = await book({});
    const res = await call("PATCH", `/appointments/${created.body.id}`, { key, body: { scheduled_start: "0000-01-01T00:00:00.000Z" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(outOfRange("scheduled_start"));
    const list = await call("GET", "/appointments?limit=100", { key });
    expect(list.body.data.find((a: { id: string }) => a.id === created.body.id)).toEqual(created.body);
  });
});
