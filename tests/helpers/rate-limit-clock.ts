// An injectable clock for rate-limit windows. Windows are aligned to the minute, so a test asserting
// exact counts must run inside one window. Instead of waiting up to a minute of wall-clock time for
// the next window, a test moves the clock to just after the next window starts: only `Date` is
// faked (timers stay real) and it runs on at the real pace from there. The limiter reads
// `Date.now()` on every store (in memory, and @upstash/ratelimit's for Redis), so it sees that clock.
//   In this process: startOfNextWindow() (vitest's fake Date).
//   In a child server: start it with windowClockEnv() (window-clock-preload.mjs), then
//   startOfNextWindowIn(child) moves the child's clock the same way.
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, vi } from "vitest";

afterEach(() => {
  vi.useRealTimers();
});

/** From now until the test ends, the clock reads from just after the start of the next window. */
export function startOfNextWindow(windowMs = 60_000): void {
  const start = Math.ceil(Date.now() / windowMs) * windowMs + 50;
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, now: start });
}

/** Environment for a child server whose clock startOfNextWindowIn can move. */
export function windowClockEnv(): Record<string, string> {
  const preload = pathToFileURL(path.join(__dirname, "window-clock-preload.mjs")).href;
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${preload}`.trim() };
}

/**
 * Moves a child server's clock (started with windowClockEnv) to just after the start of the next
 * window; resolves once the child says it has (it runs on from there at the real pace), with the
 * start of that window (epoch ms).
 */
export function startOfNextWindowIn(child: ChildProcess, windowMs = 60_000, timeoutMs = 10_000): Promise<number> {
  const moved = movesOf(child);
  const target = moved.count + 1;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the child's clock did not move within ${timeoutMs} ms`)), timeoutMs);
    const done = (movedTo: number) => {
      clearTimeout(timer);
      const start = Math.floor(movedTo / windowMs) * windowMs;
      if (movedTo - start > 1_000) reject(new Error(`the child's clock moved to ${movedTo}, not to the start of a window`));
      else resolve(start);
    };
    moved.waiters.push({ target, done });
    child.kill("SIGUSR2");
  });
}

type Moves = { count: number; movedTo: Map<number, number>; waiters: { target: number; done: (movedTo: number) => void }[] };
const movesByChild = new WeakMap<ChildProcess, Moves>();

/** Reads the child's "window clock moved <n> to <ms>" lines on its stdout (one listener per child). */
function movesOf(child: ChildProcess): Moves {
  const known = movesByChild.get(child);
  if (known) return known;
  const state: Moves = { count: 0, movedTo: new Map(), waiters: [] };
  child.stdout!.on("data", (d: Buffer) => {
    for (const m of d.toString().matchAll(/window clock moved (\d+) to (\d+)/g)) {
      state.count = Math.max(state.count, Number(m[1]));
      state.movedTo.set(Number(m[1]), Number(m[2]));
    }
    for (const w of [...state.waiters])
      if (state.count >= w.target) {
        state.waiters.splice(state.waiters.indexOf(w), 1);
        w.done(state.movedTo.get(w.target)!);
      }
  });
  movesByChild.set(child, state);
  return state;
}
