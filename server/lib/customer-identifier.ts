// The customer half of a conversation's natural key (tenant, channel, customer identifier). It is
// normalized before it is stored or matched, so "+971 50 123 4567" and "+971501234567" are one
// customer: E.164 for phone channels (libphonenumber-js with its full metadata, so a number must be
// a real, valid number of its country), lower-cased for email, trimmed otherwise.
//
// A phone number without a country code ("050 123 4567") is read in DEFAULT_PHONE_REGION (an ISO
// 3166 alpha-2 code such as AE) when that is set; without it such a number is refused with a 400,
// because guessing a country would silently split or merge customers.
import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import { z } from "zod";
import { type Channel, PHONE_CHANNELS } from "./conversation-channels";
import { badRequest } from "./errors";
import { setting } from "./settings";

const FIELD = "customer_identifier";
const emailShape = z.email();

function defaultRegion(): CountryCode | undefined {
  return setting("DEFAULT_PHONE_REGION") as CountryCode | undefined;
}

/**
 * Answers of `toE164` by region and input as given: a parse with the full metadata costs about
 * 10 µs and an inbound message asks three times (its business number, and its sender twice), mostly
 * about numbers seen before (the business's own, its regular customers'). The answer depends on
 * nothing else, so a remembered one is the one a parse would give. Bounded (the oldest goes first),
 * and only inputs of a phone number's length.
 */
const parsedNumbers = new Map<string, string | null>();
const MAX_PARSED_NUMBERS = 10_000;
const MAX_REMEMBERED_INPUT = 40;

/** E.164 form of a phone number, or null when it is not a valid number. */
export function toE164(input: string, region: CountryCode | undefined = defaultRegion()): string | null {
  const key = input.length <= MAX_REMEMBERED_INPUT ? `${region ?? ""} ${input}` : null;
  const known = key === null ? undefined : parsedNumbers.get(key);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(input.trim(), region);
  const e164 = parsed?.isValid() ? parsed.number : null;
  if (key !== null) {
    if (parsedNumbers.size >= MAX_PARSED_NUMBERS) parsedNumbers.delete(parsedNumbers.keys().next().value!);
    parsedNumbers.set(key, e164);
  }
  return e164;
}

/** The stored, matched form of a customer identifier on a channel; a 400 naming the field when unusable. */
export function normalizeCustomerIdentifier(channel: Channel, raw: string): string {
  const trimmed = raw.trim();
  if (!trimmed) throw badRequest(`invalid field '${FIELD}': must not be blank`, FIELD);
  if (PHONE_CHANNELS.has(channel)) {
    const region = defaultRegion();
    const e164 = toE164(trimmed, region);
    if (!e164) {
      const hint = region ? "" : " with its country code, e.g. +971501234567";
      throw badRequest(`invalid field '${FIELD}': not a valid phone number for channel '${channel}'${hint}`, FIELD);
    }
    return e164;
  }
  if (channel === "email") {
    const email = trimmed.toLowerCase();
    if (!emailShape.safeParse(email).success) throw badRequest(`invalid field '${FIELD}': not a valid email address for channel 'email'`, FIELD);
    return email;
  }
  return trimmed;
}

/**
 * A customer's phone number as leads and appointments store it (E.164), or null when it is not a
 * valid number: `toE164`, and a leading `00` read as the international prefix whatever the region
 * (most countries dial abroad with 00; without a region, or in one dialling 011, libphonenumber
 * would not read it).
 */
export function normalizePhone(input: string, region: CountryCode | undefined = defaultRegion()): string | null {
  const trimmed = input.trim();
  const e164 = toE164(trimmed, region);
  if (e164 !== null || !trimmed.startsWith("00")) return e164;
  return toE164(`+${trimmed.slice(2)}`, region);
}

/** A phone field's stored form (E.164); a 400 naming the field when it is not a valid number. */
export function normalizePhoneField(field: string, raw: string): string {
  const region = defaultRegion();
  const e164 = normalizePhone(raw, region);
  if (e164 === null) {
    const hint = region ? "" : " with its country code, e.g. +971501234567";
    throw badRequest(`invalid field '${field}': not a valid phone number${hint}`, field);
  }
  return e164;
}

/** The country and national number of an E.164 number (null when it is not one). */
export function phoneParts(e164: string): { country: CountryCode | undefined; nationalNumber: string } | null {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed ? { country: parsed.country, nationalNumber: parsed.nationalNumber } : null;
}
