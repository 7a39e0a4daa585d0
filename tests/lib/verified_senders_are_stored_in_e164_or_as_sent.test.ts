// The customer identifier of a sender a provider verified (server/lib/sender-identifier.ts): never
// refused for its format. A valid number is E.164 as an API write stores it; a possible number the
// metadata does not list is E.164 too (one customer however it is written); anything else is kept as
// the provider sent it and marked `as_sent`; only a blank or oversized sender has nothing to store.
import { describe, expect, it } from "vitest";
import { canReceiveMessages, senderIdentifier } from "../../server/lib/sender-identifier";
import { normalizeCustomerIdentifier } from "../../server/lib/customer-identifier";

describe("senderIdentifier", () => {
  it.each([
    ["+971501234567", "+971501234567", "normalized"],
    [" +971 50 123 4567 ", "+971501234567", "normalized"],
    ["+971511234567", "+971511234567", "normalized"],
    ["+971 51 123 4567", "+971511234567", "normalized"],
    ["12345", "12345", "as_sent"],
    ["+12345", "+12345", "as_sent"],
    ["+999123456789", "+999123456789", "as_sent"],
    [" MarinaBank ", "MarinaBank", "as_sent"],
    ["anonymous", "anonymous", "as_sent"],
  ])("%s_is_stored_as_%s_%s", (sent, identifier, kind) => {
    expect(senderIdentifier(sent)).toEqual({ identifier, kind });
  });

  it("a_wa_id_is_read_as_a_number_with_its_plus_and_kept_as_sent_when_it_is_none", () => {
    expect(senderIdentifier("971511234567", "+971511234567")).toEqual({ identifier: "+971511234567", kind: "normalized" });
    expect(senderIdentifier("12345", "+12345")).toEqual({ identifier: "12345", kind: "as_sent" });
  });

  it("only_a_blank_or_oversized_sender_has_nothing_to_store", () => {
    expect([senderIdentifier(""), senderIdentifier("   "), senderIdentifier("x".repeat(321))]).toEqual([null, null, null]);
    expect(senderIdentifier("x".repeat(320))).toEqual({ identifier: "x".repeat(320), kind: "as_sent" });
  });

  it("an_api_write_still_refuses_what_intake_stores", () => {
    expect(() => normalizeCustomerIdentifier("sms", "+971511234567")).toThrow(
      "invalid field 'customer_identifier': not a valid phone number for channel 'sms'",
    );
    expect(() => normalizeCustomerIdentifier("sms", "MarinaBank")).toThrow("invalid field 'customer_identifier'");
  });

  it("replies_go_to_numbers_and_short_codes_never_to_an_alphanumeric_id", () => {
    expect(["+971511234567", "12345", "MarinaBank", "anonymous", "+"].map(canReceiveMessages)).toEqual([true, true, false, false, false]);
  });
});
