// The retry ladder and the outcome rules of a delivery attempt, shared by both engines (embedded
// worker and Inngest). Pure: no I/O, no clock.
import { setting } from "../settings";

/** Delay before each attempt: immediately, then +60 s, +5 min, +30 min, +2 h, +12 h. */
export const DEFAULT_RETRY_DELAYS_MS = [0, 60_000, 300_000, 1_800_000, 7_200_000, 43_200_000] as const;
export const MAX_ATTEMPTS = DEFAULT_RETRY_DELAYS_MS.length;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
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

export const truncateBody = (text: string | null | undefined): string | null =>
  text == null ? null : text.length > RESPONSE_BODY_LIMIT ? text.slice(0, RESPONSE_BODY_LIMIT) : text;
