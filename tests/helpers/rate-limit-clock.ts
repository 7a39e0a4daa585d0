// An injectable clock for rate-limit windows. Windows are aligned to the minute, so a test asserting
// exact counts must run inside one window. Instead of waiting up to a minute of wall-clock time for
// the next window, a test moves this process's clock to just after the next window starts: only
// `Date` is faked (timers stay real) and it runs on at the real pace from there. The limiter reads
// `Date.now()` on every store (in memory, and @upstash/ratelimit's for Redis), so it sees that clock.
// For limiters in this process only: a child process (a mounted server) keeps the real clock.
import { afterEach, vi } from "vitest";

afterEach(() => {
  vi.useRealTimers();
});

/** From now until the test ends, the clock reads from just after the start of the next window. */
export function startOfNextWindow(windowMs = 60_000): void {
  const start = Math.ceil(Date.now() / windowMs) * windowMs + 50;
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, now: start });
}
