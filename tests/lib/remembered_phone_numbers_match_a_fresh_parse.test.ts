// toE164 remembers its answers (server/lib/customer-identifier.ts): asked again, in any
// order and with or without a default region, it gives exactly what libphonenumber-js gives for
// that input and region, valid or not, also once more numbers were asked than it remembers.
import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import { describe, expect, it } from "vitest";
import { toE164 } from "../../server/lib/customer-identifier";

const freshParse = (input: string, region?: CountryCode) => {
  const parsed = parsePhoneNumberFromString(input.trim(), region);
  return parsed?.isValid() ? parsed.number : null;
};

const INPUTS = [
  "+971501234567",
  " +971 50 123 4567 ",
  "+97150123456", // one digit short
  "050 123 4567", // national: valid only with a region
  "04 300 1234",
  "+14155552671",
  "(415) 555-2671",
  "whatsapp:+971501234567",
  "not a number",
  "",
  "+",
  `+9715${"0".repeat(60)}`, // longer than anything remembered
];

describe("remembered E.164 answers", () => {
  it("equal a fresh parse for every input and region, asked first, again, and in the other order", () => {
    const regions: (CountryCode | undefined)[] = [undefined, "AE", "US"];
    for (const round of [regions, [...regions].reverse(), regions]) {
      for (const region of round) {
        for (const input of INPUTS) expect([input, region, toE164(input, region)]).toEqual([input, region, freshParse(input, region)]);
      }
    }
    // The region decides national numbers: remembered per region, never across.
    expect([toE164("050 123 4567", "AE"), toE164("050 123 4567", undefined)]).toEqual(["+971501234567", null]);
  });

  it("still equal a fresh parse after more distinct numbers than it remembers", () => {
    const numbers = Array.from({ length: 12_000 }, (_, i) => `+97150${String(1_000_000 + i)}`);
    for (const n of numbers) toE164(n, undefined);
    for (const n of [numbers[0]!, numbers[5_000]!, numbers.at(-1)!, ...INPUTS]) expect(toE164(n, "AE")).toBe(freshParse(n, "AE"));
    for (const n of [numbers[0]!, numbers.at(-1)!]) expect(toE164(n, undefined)).toBe(freshParse(n, undefined));
  });
});
