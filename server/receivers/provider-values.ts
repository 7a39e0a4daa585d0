// A provider's dates and numbers as our columns hold them, the one place a receiver converts them:
// an instant in years 0001..9999 (PostgreSQL has no year 0, JavaScript's Date ends at +275760, and
// the wire's ISO 8601 has four-digit years) and a whole number of seconds that fits the 32-bit
// duration column. A signed request is the provider's word, not proof that its values fit: one
// outside is a 400 naming the field (`answerReceiver` logs the field, never the value), raised
// while the report is built, before anything is stored.
import { YEARS, inYearRange } from "../lib/wire";
import { malformed } from "./receiver-http";

/** The most seconds `duration_seconds` (a PostgreSQL integer) holds: about 68 years. */
const MAX_DURATION_SECONDS = 2_147_483_647;

/** Epoch milliseconds as an instant; outside 0001..9999 (or not a number) is a 400 naming `field`. */
export function instantAt(ms: number, field: string): Date {
  const at = new Date(ms);
  if (Number.isNaN(at.getTime()) || !inYearRange(at)) throw malformed(`invalid field '${field}': ${YEARS} (in UTC)`, field);
  return at;
}

/** A date-time the provider wrote as text (ISO 8601 or RFC 2822, as `Date.parse` reads them), or null when it is not one. */
export function instantOfText(text: string, field: string): Date | null {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : instantAt(ms, field);
}

/** `seconds` after `start` (to the millisecond). */
export const instantAfter = (start: Date, seconds: number, field: string): Date => instantAt(start.getTime() + Math.round(seconds * 1000), field);

/** A duration in whole seconds (rounded; a negative one is 0) that the duration column holds, or a 400 naming `field`. */
export function wholeSeconds(seconds: number, field: string): number {
  const whole = Math.max(0, Math.round(seconds));
  if (!(whole <= MAX_DURATION_SECONDS)) throw malformed(`invalid field '${field}': a call lasts at most ${MAX_DURATION_SECONDS} seconds`, field);
  return whole;
}
