// The customer identifier of a sender a provider has verified (a signed inbound message or call on
// voice, sms or whatsapp). A provider's signed request is proof the sender exists, so intake never
// refuses one for the format of its sender, unlike an API write (`normalizeCustomerIdentifier`,
// whose 400 a client can correct):
//   1. a valid number (libphonenumber's metadata lists it) -> E.164, as an API write stores it;
//   2. a possible E.164 number the metadata does not list yet (a new range) -> E.164 (`+digits`);
//   3. anything else (a short code, an alphanumeric sender id, a country code the metadata lacks)
//      -> the sender as the provider sent it (trimmed), with the kind `as_sent`.
// Cases 1 and 2 are both `normalized`: one customer writing "+971 51 …" and "+97151…" is one pair.
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import type { CustomerIdentifierKind } from "./conversation-channels";
import { toE164 } from "./customer-identifier";

export type SenderIdentifier = { identifier: string; kind: CustomerIdentifierKind };

/** The longest sender stored (the API's `customer_identifier` bound). */
export const MAX_SENDER_LENGTH = 320;

/**
 * The stored form of a verified sender, or null when there is none to store (blank, or longer than
 * MAX_SENDER_LENGTH: the receiver answers a 400 naming its field). `asNumber` is the sender written
 * as a number to try when the provider writes it otherwise (WhatsApp's `wa_id`, digits without `+`).
 */
export function senderIdentifier(sent: string, asNumber: string = sent): SenderIdentifier | null {
  const trimmed = sent.trim();
  if (!trimmed || trimmed.length > MAX_SENDER_LENGTH) return null;
  const number = asNumber.trim();
  const valid = toE164(number);
  if (valid) return { identifier: valid, kind: "normalized" };
  // Only a number written with its country code is read as possible: a default region would turn a short code into a national number.
  const parsed = number.startsWith("+") ? parsePhoneNumberFromString(number) : undefined;
  if (parsed?.isPossible()) return { identifier: parsed.number, kind: "normalized" };
  return { identifier: trimmed, kind: "as_sent" };
}

/**
 * Whether a provider can be asked to send to a customer identifier: an E.164 number, or digits as
 * a provider sent them (a short code; the provider decides). An alphanumeric sender id never
 * receives messages (it is one-way by definition), so a reply to one is refused before it is stored.
 */
export const canReceiveMessages = (identifier: string): boolean => /^\+?\d+$/.test(identifier);
