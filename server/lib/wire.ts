// Wire formats shared by every resource: ids, timestamps, dates, decimals, JSON objects.
import { z } from "zod";
import { badRequest } from "./errors";
import { invalid } from "./field-messages";

export { invalid } from "./field-messages";

export const uuid = () => z.uuid(invalid("must be a uuid"));

/**
 * Years PostgreSQL and the wire format both hold: PostgreSQL has no year 0 (it is 1 BC), and a year
 * past 9999 is not four digits of ISO 8601 any more.
 */
export const YEARS = "must be between years 0001 and 9999";
export const inYearRange = (d: Date) => {
  const year = d.getUTCFullYear();
  return year >= 1 && year <= 9999;
};

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z; any offset is accepted, the UTC instant must fall in 0001..9999. */
export const isoDateTime = () =>
  z.iso.datetime({ offset: true, ...invalid("must be an ISO 8601 date-time") }).refine((s) => inYearRange(new Date(s)), { message: `${YEARS} (in UTC)` });

/** YYYY-MM-DD, a real calendar date (2026-02-30 is refused). */
export const calendarDate = () =>
  z
    .string(invalid("must be a date YYYY-MM-DD"))
    .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date YYYY-MM-DD" })
    .refine(
      (s) => {
        const d = new Date(`${s}T00:00:00.000Z`);
        return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
      },
      { message: "must be a real calendar date" },
    )
    .refine((s) => inYearRange(dateFromWire(s)), { message: YEARS });
export const dateFromWire = (s: string) => new Date(`${s}T00:00:00.000Z`);
export const dateToWire = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : null);

/** JSON as a jsonb column takes it (what Prisma's JSON input types accept). */
type JsonValue = string | number | boolean | null | JsonObject | JsonValue[];
export type JsonObject = { [key: string]: JsonValue };

/** A free-keyed JSON object (as responses describe `attributes`). */
export const jsonObject = () => z.record(z.string(), z.unknown());

/** The most an `attributes` object may take, as UTF-8 bytes of its JSON text. */
export const MAX_ATTRIBUTES_BYTES = 16 * 1024;
const attributesBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
const attributesTooLarge = (bytes: number) => `must be at most 16 KiB as JSON (${MAX_ATTRIBUTES_BYTES} bytes; got ${bytes})`;

/**
 * `attributes` as an input: a JSON object of at most 16 KiB. What is stored is the merge of this
 * with the stored object, and `mergeAttributes` checks that too; this refuses an oversized patch
 * before anything is read.
 */
export const attributesInput = () =>
  jsonObject().superRefine((value, ctx) => {
    const bytes = attributesBytes(value);
    if (bytes > MAX_ATTRIBUTES_BYTES) ctx.addIssue({ code: "custom", message: attributesTooLarge(bytes) });
  });

/**
 * Shallow merge used for `attributes`: keys in the patch overwrite or add, a `null` value deletes,
 * other stored keys stay. The limit applies to the merged object (what is stored): a 400 naming
 * `attributes` when it would exceed 16 KiB, even if each patch alone is small.
 */
export function mergeAttributes(stored: unknown, patch: Record<string, unknown>): JsonObject {
  const next: Record<string, unknown> = { ...(stored && typeof stored === "object" ? (stored as object) : {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  const bytes = attributesBytes(next);
  if (bytes > MAX_ATTRIBUTES_BYTES) throw badRequest(`invalid field 'attributes': ${attributesTooLarge(bytes)}`, "attributes");
  // JSON in (a parsed body, a stored jsonb object), JSON out: what a jsonb column takes.
  return next as JsonObject;
}

/** `numeric(65,30)`: at most 35 integer digits and 30 fractional digits are kept exactly. */
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const fitsNumeric = (s: string) => {
  const [int, frac = ""] = s.split(".");
  return int.replace(/^0+(?=\d)/, "").length <= 35 && frac.length <= 30;
};

/** Plain-notation decimal string of a non-negative JS number (never exponent form). */
function numberToDecimalString(n: number): string {
  const s = String(n);
  const e = s.search(/e/i);
  if (e < 0) return s;
  // Shift the decimal point of the shortest round-trip digits by the exponent.
  const [int, frac = ""] = s.slice(0, e).split(".");
  const digits = int + frac;
  const point = int.length + Number(s.slice(e + 1));
  if (point <= 0) return `0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + "0".repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A price: a number >= 0, or a decimal string for values a number would round. */
export const decimalInput = () =>
  z
    .union([
      z.number().nonnegative({ message: "must be >= 0" }).refine(Number.isFinite, { message: "must be finite" }),
      z.string().regex(DECIMAL, { message: 'must be a non-negative decimal string like "1500.50"' }),
    ])
    .transform((v) => (typeof v === "number" ? numberToDecimalString(v) : v))
    .refine(fitsNumeric, { message: "must have at most 35 integer and 30 fractional digits" });

/** A stored decimal (Prisma Decimal) in plain notation, trailing zeros removed. */
export function decimalToWire(d: { toFixed(): string } | string): string {
  const s = typeof d === "string" ? d : d.toFixed();
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

/** Stripe-style `previous_attributes`: the old values of the wire fields that changed. */
export function changedFields<T extends Record<string, unknown>>(before: T, after: T): Partial<T> {
  const changed: Partial<T> = {};
  for (const key of Object.keys(after) as (keyof T)[]) {
    if (key === "updated_at") continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) changed[key] = before[key];
  }
  return changed;
}

/** Longest target URL accepted (webhooks, CRM); here, free of Node imports, so the dashboard can validate with it. */
export const MAX_URL_LENGTH = 2048;
