// Redacting a customer's values out of stored JSON (event payloads, tool answers, audit details,
// notification data) without changing its shape: a string holding one of the values has each
// occurrence replaced by ERASED; in a record that belongs to the erased customer (found by one of
// their records' ids), the fields that hold personal values are erased whatever they say.
import { ERASED } from "./erasure.types";

/** Fields that hold a customer's personal values in the platform's resources and events. */
const PERSONAL_FIELDS: ReadonlySet<string> = new Set([
  "customer_identifier",
  "customer_name",
  "customer_phone",
  "customer_email",
  "body",
  "summary",
  "notes",
  "comment",
  "recording_url",
  "location_text",
  "reason",
  "transcript",
  "attributes",
]);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** One case-insensitive pattern of every value (longest first, so a longer value wins over a part of it). */
export function valuePattern(values: readonly string[]): RegExp | null {
  const usable = [...new Set(values.filter((v) => v.length > 0))].sort((a, b) => b.length - a.length);
  return usable.length ? new RegExp(usable.map(escapeRegExp).join("|"), "gi") : null;
}

/** `text` with every occurrence of a value replaced by ERASED. */
export function redactText(text: string, pattern: RegExp | null): string {
  return pattern ? text.replace(pattern, ERASED) : text;
}

/** A copy of `value` with the redaction applied (arrays and objects keep their shape). */
export function redactJson(value: unknown, pattern: RegExp | null, fields: boolean): unknown {
  if (typeof value === "string") return redactText(value, pattern);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, pattern, fields));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (fields && PERSONAL_FIELDS.has(key) && v !== null) out[key] = erasedField(v);
      else out[key] = redactJson(v, pattern, fields);
    }
    return out;
  }
  return value;
}

function erasedField(v: unknown): unknown {
  if (typeof v === "string") return ERASED;
  if (Array.isArray(v)) return [];
  if (typeof v === "object") return {};
  return v;
}
