// assertBoundedInput, the one check every surface runs on its input: depth at most 32, no NUL, no
// lone surrogate, no non-finite number, each refused as a 400 naming the field (never a stack overflow or an SQL error).
import { describe, expect, it } from "vitest";
import { assertBoundedInput, MAX_INPUT_DEPTH } from "../../server/lib/bounded-input";
import { AppError } from "../../server/lib/errors";

/** A value `levels` containers deep: {a:{a:…{}}} built without recursion. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

function refusal(value: unknown): AppError {
  try {
    assertBoundedInput(value);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error("expected a refusal");
}

describe("assertBoundedInput", () => {
  it("400_names_the_path_of_a_nul_character", () => {
    const err = refusal({ title: "ok", attributes: { x: "a\u0000b" } });
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe("bad_request");
    expect(err.message).toBe("invalid field 'attributes.x': must not contain NUL characters");
    expect(err.field).toBe("attributes.x");
  });

  it("400_names_an_array_index", () => {
    const err = refusal({ photos: ["https://a.example/1", "https://a.example/2", "x\u0000"] });
    expect(err.message).toBe("invalid field 'photos[2]': must not contain NUL characters");
    expect(err.field).toBe("photos[2]");
    expect(refusal({ a: [[1, { b: "\ud800" }]] }).field).toBe("a[0][1].b");
  });

  it("400_for_a_nul_in_a_key_names_the_key_shown_escaped", () => {
    const err = refusal({ attributes: { "k\u0000": 1 } });
    expect(err.message).toBe("invalid field 'attributes.k\\u0000': must not contain NUL characters");
  });

  it("400_for_lone_surrogates_in_values_and_keys", () => {
    expect(refusal({ attributes: { x: "\ud800" } }).message).toBe("invalid field 'attributes.x': contains an unpaired surrogate (not valid Unicode)");
    expect(refusal({ attributes: { x: "a\udc00" } }).field).toBe("attributes.x");
    expect(refusal({ attributes: { x: "\udbff\udbff\udc00" } }).field).toBe("attributes.x");
    // The key is shown with U+FFFD in place of the lone surrogate, so the message is valid Unicode itself.
    const key = refusal({ attributes: { "b\udfff": true } });
    expect(key.message).toBe("invalid field 'attributes.b\ufffd': contains an unpaired surrogate (not valid Unicode)");
  });

  it("400_for_a_number_json_cannot_carry_back_names_the_field", () => {
    // What JSON.parse makes of 1e400 and -1e400; JSON.stringify would write null ("delete this key").
    const parsed = JSON.parse('{"attributes":{"big":1e400,"list":[1,-1e400]}}');
    expect(parsed.attributes.big).toBe(Number.POSITIVE_INFINITY);
    const err = refusal(parsed);
    expect(err.status).toBe(400);
    expect(err.message).toBe("invalid field 'attributes.big': must be a finite number (a JSON number beyond ±1.7976931348623157e308 does not fit a double)");
    expect(err.field).toBe("attributes.big");
    expect(refusal({ attributes: { list: [1, Number.NEGATIVE_INFINITY] } }).field).toBe("attributes.list[1]");
    expect(refusal({ n: Number.NaN }).field).toBe("n");
    expect(refusal(Number.POSITIVE_INFINITY).message).toBe(
      "invalid input: must be a finite number (a JSON number beyond ±1.7976931348623157e308 does not fit a double)",
    );
    // The largest doubles and the smallest subnormals round-trip: they pass.
    expect(() => assertBoundedInput(JSON.parse('{"a":1.7976931348623157e308,"b":-1.7976931348623157e308,"c":5e-324,"d":1e-400}'))).not.toThrow();
  });

  it("well_formed_text_passes_including_surrogate_pairs", () => {
    expect(() => assertBoundedInput({ name: "emoji 😀 \ud83d\ude00", list: ["ü", "漢字"], n: 1, b: null, t: true })).not.toThrow();
    expect(() => assertBoundedInput("plain")).not.toThrow();
    expect(() => assertBoundedInput(undefined)).not.toThrow();
  });

  it("32_levels_pass_and_33_are_a_400_naming_the_path", () => {
    expect(() => assertBoundedInput(nested(MAX_INPUT_DEPTH))).not.toThrow();
    expect(MAX_INPUT_DEPTH).toBe(32);
    expect(() => assertBoundedInput({ attributes: nested(MAX_INPUT_DEPTH - 1) })).not.toThrow();
    const err = refusal({ attributes: nested(MAX_INPUT_DEPTH) });
    // Body (1) + attributes (2) + 31 more = 33 containers: the 33rd is at attributes + 31 × `.a`.
    const field = `attributes${".a".repeat(31)}`;
    expect(err.message).toBe(`invalid field '${field}': nested deeper than 32 levels`);
    expect(err.field).toBe(field);
    // Arrays count as levels too.
    let arrays: unknown = [];
    for (let i = 0; i < 32; i++) arrays = [arrays];
    expect(refusal(arrays).message).toMatch(/^invalid field '(\[0\]){32}': nested deeper than 32 levels$/);
  });

  it("100000_levels_are_a_400_without_overflowing_the_stack", () => {
    const err = refusal({ attributes: nested(100_000) });
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^invalid field 'attributes(\.a)+': nested deeper than 32 levels$/);
    let arrays: unknown = 0;
    for (let i = 0; i < 100_000; i++) arrays = [arrays];
    expect(refusal(arrays).message).toMatch(/nested deeper than 32 levels$/);
  });

  it("a_long_path_is_shortened_in_the_message", () => {
    const long = "k".repeat(300);
    const err = refusal({ [long]: "\u0000" });
    expect(err.message).toBe(`invalid field '${"k".repeat(200)}...': must not contain NUL characters`);
  });

  it("the_first_problem_in_document_order_is_named", () => {
    expect(refusal({ a: "ok", b: "\u0000", c: "\ud800" }).field).toBe("b");
    expect(refusal(["\ud800", "\u0000"]).field).toBe("[0]");
  });
});
