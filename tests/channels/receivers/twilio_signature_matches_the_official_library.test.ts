// The receiver's own HMAC-SHA1 (over Node's one-shot hash, server/receivers/twilio.ts) gives
// exactly what the official library signs with, for keys shorter and longer than SHA-1's block and
// any text: a message is accepted on it only where `validateRequest` would accept it too.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { hmacSha1Base64 } from "../../../server/receivers/twilio";

const randomText = (length: number) =>
  Array.from({ length }, () => String.fromCodePoint([0x41, 0x20, 0xe9, 0x645, 0x1f600][Math.floor(Math.random() * 5)]! + Math.floor(Math.random() * 20))).join(
    "",
  );

describe("twilio signature", () => {
  it("hmac_sha1_equals_node_createhmac_for_keys_of_0_to_200_bytes_and_any_text", () => {
    for (const keyLength of [0, 1, 20, 32, 63, 64, 65, 100, 200]) {
      for (const dataLength of [0, 1, 55, 64, 300, 5000]) {
        const key = randomBytes(keyLength).toString("latin1").slice(0, keyLength);
        const data = randomText(dataLength);
        expect(hmacSha1Base64(key, data)).toBe(createHmac("sha1", key).update(Buffer.from(data, "utf-8")).digest("base64"));
      }
    }
  });

  it("equals_the_official_librarys_expected_signature_of_a_url_and_its_sorted_parameters", () => {
    const token = randomBytes(16).toString("hex");
    const url = "https://hooks.receptionist.example/api/webhooks/twilio/messaging?x=1";
    const params = { To: "+97145550123", From: "whatsapp:+971501234567", Body: randomText(200), MessageSid: `SM${"a".repeat(32)}`, NumMedia: "0" };
    const data =
      url +
      Object.keys(params)
        .sort()
        .map((k) => k + params[k as keyof typeof params])
        .join("");
    expect(hmacSha1Base64(token, data)).toBe(getExpectedTwilioSignature(token, url, params));
  });
});
