// The retry ladder and the outcome rules of a delivery attempt, shared by both engines (embedded
// worker and Inngest). Pure: no I/O, no clock.
import { setting } from "../lib/settings";

/** Delay before each attempt: immediately, then +60 s, +5 min, +30 min, +2 h, +12 h. */
export const DEFAULT_RETRY_DELAYS_MS = [0, 60_000, 300_000, 1_800_000, 7_200_000, 43_200_000] as const;
export const MAX_ATTEMPTS = DEFAULT_RETRY_DELAYS_MS.length;
/** `response_body` (of an attempt and of its delivery) keeps at most this many characters. */
export const RESPONSE_BODY_LIMIT = 2048;

/**
 * The ladder in force: the specification's unless `WEBHOOK_RETRY_DELAYS_MS` gives six
 * comma-separated delays (tests shorten it). The first is the delay of attempt 1 and must be 0.
 */
export function retryDelays(env: Record<string, string | undefined> = process.env): readonly number[] {
  return setting("WEBHOOK_RETRY_DELAYS_MS", env) ?? DEFAULT_RETRY_DELAYS_MS;
}

export function attemptTimeoutMs(env: Record<string, string | undefined> = process.env): number {
  return setting("WEBHOOK_ATTEMPT_TIMEOUT_MS", env);
}

export type AttemptOutcome = "delivered" | "permanent_fail" | "retry";
export type DeliveryStatus = "pending" | "delivered" | "permanent_fail" | "dead_letter";

/**
 * 2xx delivered; 5xx, a timeout or a network error (no status) retried; anything else permanent:
 * 4xx by the specification, and 1xx/3xx too (redirects are never followed, so a redirecting target
 * is misconfigured and retrying would not help).
 */
export function classifyOutcome(statusCode: number | null): AttemptOutcome {
  if (statusCode === null) return "retry";
  if (statusCode >= 200 && statusCode < 300) return "delivered";
  if (statusCode >= 500 && statusCode < 600) return "retry";
  return "permanent_fail";
}

export type NextStep = { status: DeliveryStatus; nextDelayMs: number | null };

/** What follows attempt `attemptNumber` (1-based) of a cycle that ended with `outcome`. */
export function nextStep(attemptNumber: number, outcome: AttemptOutcome, delays: readonly number[] = retryDelays()): NextStep {
  if (outcome === "delivered") return { status: "delivered", nextDelayMs: null };
  if (outcome === "permanent_fail") return { status: "permanent_fail", nextDelayMs: null };
  if (attemptNumber >= delays.length) return { status: "dead_letter", nextDelayMs: null };
  return { status: "pending", nextDelayMs: delays[attemptNumber] };
}

/**
 * A consumer's 429 with `Retry-After` is honoured without spending a rung this many times per
 * cycle; past that a 429 spends rungs like a 5xx, so a consumer that throttles forever still ends
 * in dead_letter (after at most MAX_ATTEMPTS + this many attempts).
 */
export const MAX_THROTTLED_ATTEMPTS = 20;
/** The longest `Retry-After` honoured (a later one waits this long). */
const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * `Retry-After` in ms from `nowMs`: delay-seconds or an HTTP date (a past date is 0). Null when
 * absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, nowMs = Date.now()): number | null {
  const value = header?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, Number.MAX_SAFE_INTEGER);
  // An HTTP date starts with its day's name (IMF-fixdate, RFC 850, asctime); Date.parse alone takes "1.5" too.
  if (!/^[A-Za-z]{3}/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export type AttemptAnswer = { statusCode: number | null; retryAfterMs: number | null };
export type AttemptPlan = NextStep & {
  outcome: AttemptOutcome;
  /** true: a 429 honoured without spending a rung. */
  throttled: boolean;
  /** How long the whole subscription waits before its next send (a consumer's Retry-After), or null. */
  pauseMs: number | null;
};

/**
 * What follows attempt `attemptNumber` of a cycle in which `throttledBefore` earlier attempts were
 * throttled (so this attempt stands on rung `attemptNumber - throttledBefore`). A 429 with
 * `Retry-After` is retried after that time, capped at the next rung's delay (and 1 hour), without
 * spending the rung while fewer than MAX_THROTTLED_ATTEMPTS were; the subscription pauses as long.
 */
export function planNext(attemptNumber: number, throttledBefore: number, answer: AttemptAnswer, delays: readonly number[] = retryDelays()): AttemptPlan {
  const rung = attemptNumber - throttledBefore;
  const asked = answer.statusCode === 429 ? answer.retryAfterMs : null;
  if (asked === null) {
    const outcome = classifyOutcome(answer.statusCode);
    return { ...nextStep(rung, outcome, delays), outcome, throttled: false, pauseMs: null };
  }
  const cap = Math.min(rung < delays.length ? delays[rung] : RETRY_AFTER_MAX_MS, RETRY_AFTER_MAX_MS);
  const waitMs = Math.min(asked, cap);
  if (throttledBefore < MAX_THROTTLED_ATTEMPTS) return { status: "pending", nextDelayMs: waitMs, outcome: "retry", throttled: true, pauseMs: waitMs };
  return { ...nextStep(rung, "retry", delays), outcome: "retry", throttled: false, pauseMs: waitMs };
}

export const truncateBody = (text: string | null | undefined): string | null =>
  text == null ? null : text.length > RESPONSE_BODY_LIMIT ? text.slice(0, RESPONSE_BODY_LIMIT) : text;
