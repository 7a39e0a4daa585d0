// Issue 13, findings 5 and 6 on offerings: a year-0000 date, a lone surrogate in attributes, an
// oversized attributes object and a `javascript:` photo each answered 500 or were stored; now each is
// a 400 naming the field, and nothing is written.
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_ATTRIBUTES_BYTES } from "../../server/lib/wire";
import { call, errorOf, tenantWithKey } from "../helpers/api";

let key: string;
const offering = (body: Record<string, unknown> = {}) =>
  call("POST", "/offerings", { key, body: { title: "Villa", price: 1, price_currency: "USD", ...body } });
const patch = (id: string, body: unknown) => call("PATCH", `/offerings/${id}`, { key, body });
const bad = (message: string) => errorOf("bad_request", message);

/** An attributes object whose JSON text is exactly `bytes` long: {"k":"xxxx…"}. */
const attributesOf = (bytes: number, name = "k") => ({ [name]: "x".repeat(bytes - `{"${name}":""}`.length) });

beforeAll(async () => {
  ({ key } = await tenantWithKey());
});

describe("offering input bounds", () => {
  it("400_available_from_year_0000_names_the_field", async () => {
    const res = await offering({ available_from: "0000-01-01" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad("invalid field 'available_from': must be between years 0001 and 9999"));
    // Five-digit and signed years are not dates of the wire format at all.
    expect((await offering({ available_from: "10000-01-01" })).body).toEqual(bad("invalid field 'available_from': must be a date YYYY-MM-DD"));
    expect((await offering({ available_from: "+01000-01-01" })).status).toBe(400);
  });

  it("201_the_first_and_last_storable_dates_round_trip", async () => {
    for (const date of ["0001-01-01", "9999-12-31"]) {
      const res = await offering({ available_from: date });
      expect(res.status).toBe(201);
      expect(res.body.available_from).toBe(date);
    }
    const created = await offering();
    const moved = await patch(created.body.id, { available_from: "0000-12-31" });
    expect(moved.status).toBe(400);
    expect(moved.body.error.message).toBe("invalid field 'available_from': must be between years 0001 and 9999");
  });

  it("400_photos_accept_only_http_and_https", async () => {
    const js = await offering({ photos: ["https://cdn.example/1.jpg", "javascript:alert(document.cookie)"] });
    expect(js.status).toBe(400);
    expect(js.body).toEqual(bad("invalid field 'photos[1]': must be an http or https URL"));
    for (const uri of ["data:text/html,<script>alert(1)</script>", "JAVASCRIPT:alert(1)", "vbscript:x", "file:///etc/passwd", "ftp://files.example/a.jpg"]) {
      expect((await offering({ photos: [uri] })).body).toEqual(bad("invalid field 'photos[0]': must be an http or https URL"));
    }
    const ok = await offering({ photos: ["https://cdn.example/1.jpg", "http://cdn.example/2.jpg"] });
    expect(ok.status).toBe(201);
    expect(ok.body.photos).toEqual(["https://cdn.example/1.jpg", "http://cdn.example/2.jpg"]);
  });

  it("400_lone_surrogate_or_nul_in_attributes_names_the_key", async () => {
    const lone = await offering({ attributes: { view: "sea \ud83c" } });
    expect(lone.status).toBe(400);
    expect(lone.body).toEqual(bad("invalid field 'attributes.view': contains an unpaired surrogate (not valid Unicode)"));
    const inKey = await offering({ attributes: { "\udc00": 1 } });
    expect(inKey.body).toEqual(bad("invalid field 'attributes.\ufffd': contains an unpaired surrogate (not valid Unicode)"));
    const nul = await offering({ title: "Villa\u0000" });
    expect(nul.body).toEqual(bad("invalid field 'title': must not contain NUL characters"));
    // A surrogate pair (an emoji) is text like any other.
    const emoji = await offering({ attributes: { view: "sea 🌊" } });
    expect(emoji.status).toBe(201);
    expect(emoji.body.attributes).toEqual({ view: "sea 🌊" });
  });

  it("400_attributes_over_16_kib_on_create_and_the_limit_itself_passes", async () => {
    expect(MAX_ATTRIBUTES_BYTES).toBe(16_384);
    const atLimit = await offering({ attributes: attributesOf(16_384) });
    expect(atLimit.status).toBe(201);
    const over = await offering({ attributes: attributesOf(16_385) });
    expect(over.status).toBe(400);
    expect(over.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 16385)"));
    // Bytes, not characters: 6,000 three-byte characters are 18,000 bytes.
    const wide = await offering({ attributes: { k: "漢".repeat(6_000) } });
    expect(wide.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 18008)"));
  });

  it("400_a_patch_whose_merged_attributes_exceed_16_kib_and_the_row_is_unchanged", async () => {
    const created = await offering({ attributes: attributesOf(10_000, "a") });
    expect(created.status).toBe(201);
    const grown = await patch(created.body.id, { attributes: attributesOf(10_000, "b") });
    expect(grown.status).toBe(400);
    expect(grown.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 19999)"));
    const list = await call("GET", "/offerings?limit=100", { key });
    expect(list.body.data.find((o: { id: string }) => o.id === created.body.id)).toEqual(created.body);
    // Deleting a key in the same patch makes room: the merged object is what counts.
    const swapped = await patch(created.body.id, { attributes: { a: null, ...attributesOf(10_000, "b") } });
    expect(swapped.status).toBe(200);
    expect(Object.keys(swapped.body.attributes)).toEqual(["b"]);
  });
});
