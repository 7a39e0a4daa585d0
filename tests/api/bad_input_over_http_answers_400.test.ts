// Issue 13, finding 5 (and the `limit` part of 6), over real HTTP through the lean front: JSON nested
// 100,000 deep (a stack overflow and a 500 with a stack trace in the log, even without a key), depths
// 3,000-8,000 with a key, a lone surrogate in attributes, `available_from: "0000-01-01"`, a NUL in a
// query parameter, and `limit=99999999999999999999999` (a 400 though the docs say it is capped).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";

let mount: Running;
let key: string;

/** `{"title":…,"attributes":{"a":{"a":…1…}}}` as text, `levels` objects deep inside attributes (no recursion). */
function deepOfferingBody(levels: number): string {
  return `{"title":"Deep","price":1,"price_currency":"USD","attributes":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}`;
}

async function post(path: string, body: string, opts: { key?: string | null } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(`${mount.url}/api/v1${path}`, { method: "POST", headers, body });
  return { status: res.status, body: await res.json() };
}

async function get(path: string) {
  const res = await fetch(`${mount.url}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

const bad = (message: string) => errorOf("bad_request", message);
const DEPTH_FIELD = `attributes${".a".repeat(31)}`;
const tooDeep = bad(`invalid field '${DEPTH_FIELD}': nested deeper than 32 levels`);

beforeAll(async () => {
  ({ key } = await tenantWithKey());
  // 101 offerings, so a capped page can be told from an uncapped one.
  for (let i = 0; i < 101; i++) {
    const res = await call("POST", "/offerings", { key, body: { title: `Offering ${i}`, price: i, price_currency: "USD" } });
    if (res.status !== 201) throw new Error(`fixture: ${res.status} ${res.text}`);
  }
  mount = await startMount("lean");
});
afterAll(async () => mount?.stop());

describe("bad input over HTTP answers 400, never 500", () => {
  it("400_json_nested_100000_deep_with_a_key_names_the_field", async () => {
    const body = deepOfferingBody(100_000);
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const res = await post("/offerings", body, { key });
    expect(res).toEqual({ status: 400, body: tooDeep });
  });

  it("401_json_nested_100000_deep_without_a_key_and_no_stack_trace_in_the_log", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post("/offerings", deepOfferingBody(100_000));
      expect(res).toEqual({ status: 401, body: errorOf("unauthorized", "missing or malformed Authorization header") });
    }
    // An array nested as deep, as the whole body.
    const arrays = await post("/offerings", `${"[".repeat(100_000)}${"]".repeat(100_000)}`, { key });
    expect(arrays).toEqual({ status: 400, body: bad("request body must be a JSON object") });
    expect(mount.output()).not.toMatch(/RangeError|Maximum call stack|unhandled error/);
  });

  it("400_depths_3000_to_8000_with_a_key", async () => {
    for (const levels of [33, 3_000, 5_000, 8_000]) {
      expect(await post("/offerings", deepOfferingBody(levels), { key })).toEqual({ status: 400, body: tooDeep });
    }
    // 31 levels inside attributes (32 with the body itself) are allowed.
    const ok = await post("/offerings", deepOfferingBody(31), { key });
    expect(ok.status).toBe(201);
  });

  it("400_lone_surrogate_in_attributes_and_year_0000_name_the_field", async () => {
    const lone = await post("/offerings", '{"title":"x","price":1,"price_currency":"USD","attributes":{"floor":"\\ud800"}}', { key });
    expect(lone).toEqual({ status: 400, body: bad("invalid field 'attributes.floor': contains an unpaired surrogate (not valid Unicode)") });
    const year0 = await post("/offerings", '{"title":"x","price":1,"price_currency":"USD","available_from":"0000-01-01"}', { key });
    expect(year0).toEqual({ status: 400, body: bad("invalid field 'available_from': must be between years 0001 and 9999") });
  });

  it("400_nul_in_a_query_parameter_names_it", async () => {
    expect(await get("/offerings?cursor=abc%00")).toEqual({ status: 400, body: bad("invalid field 'cursor': must not contain NUL characters") });
  });

  it("200_limit_of_any_length_above_100_is_capped_at_100", async () => {
    for (const limit of ["101", "99999999999999999999999", "9".repeat(400)]) {
      const res = await get(`/offerings?limit=${limit}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(100);
      expect(res.body.has_more).toBe(true);
    }
  });

  it("400_limit_that_is_not_a_positive_integer_names_limit", async () => {
    const message = bad("invalid field 'limit': must be an integer from 1 to 100");
    for (const limit of ["0", "-1", "1.5", "abc", "1e3", "-99999999999999999999999", "99999999999999999999.5", ""]) {
      expect({ limit, ...(await get(`/offerings?limit=${encodeURIComponent(limit)}`)) }).toEqual({ limit, status: 400, body: message });
    }
  });
});
