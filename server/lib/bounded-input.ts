// Bounded input, the same on every surface (REST bodies and queries, dashboard tRPC inputs of
// signed-in and public procedures, agent tools over REST and MCP, provider webhooks): a value nested
// at most MAX_INPUT_DEPTH containers deep, no string or key that PostgreSQL cannot store (U+0000,
// or text that is not well-formed UTF-16, i.e. a lone surrogate, which jsonb and text refuse), and
// no number JSON cannot carry back (JSON.parse reads 1e400 as Infinity, and JSON.stringify writes
// Infinity as null, which in `attributes` means "delete this key").
// Caught here as a 400 naming the field, instead of a stack overflow, an SQL error (a 500) or a
// silently changed value.
import { badRequest } from "./errors";

/** The outermost object or array is level 1. */
export const MAX_INPUT_DEPTH = 32;

type Frame = { value: unknown; depth: number; parent: Frame | null; segment: string | number | null };

/**
 * Throws a 400 naming the first offending field (`attributes.a.b`, `photos[2]`). Iterative, so any
 * depth, even 100,000 levels, is refused without growing the call stack.
 */
export function assertBoundedInput(value: unknown): void {
  const stack: Frame[] = [{ value, depth: 0, parent: null, segment: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) throw invalidField(frame, problem);
      continue;
    }
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw invalidField(frame, NOT_FINITE);
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    const depth = frame.depth + 1;
    if (depth > MAX_INPUT_DEPTH) throw invalidField(frame, `nested deeper than ${MAX_INPUT_DEPTH} levels`);
    // Children are pushed last-first so the walk visits them, and reports the first problem, in document order.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, parent: frame, segment: i });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const child: Frame = { value: (v as Record<string, unknown>)[key], depth, parent: frame, segment: key };
      const problem = textProblem(key);
      if (problem) throw invalidField(child, problem);
      stack.push(child);
    }
  }
}

const NOT_FINITE = "must be a finite number (a JSON number beyond ±1.7976931348623157e308 does not fit a double)";

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL could not store this text, or null. */
function textProblem(s: string): string | null {
  if (s.includes("\u0000")) return "must not contain NUL characters";
  if (LONE_SURROGATE.test(s)) return "contains an unpaired surrogate (not valid Unicode)";
  return null;
}

const MAX_SHOWN_PATH = 200;

function invalidField(frame: Frame, problem: string) {
  const field = pathOf(frame);
  if (!field) return badRequest(`invalid input: ${problem}`);
  return badRequest(`invalid field '${field}': ${problem}`, field);
}

/** `attributes.a[2].b`, shown safely (the offending key itself may hold NUL or a lone surrogate), and shortened. */
function pathOf(frame: Frame): string {
  const segments: (string | number)[] = [];
  for (let f: Frame | null = frame; f && f.segment !== null; f = f.parent) segments.push(f.segment);
  let path = "";
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i];
    path += typeof s === "number" ? `[${s}]` : path ? `.${s}` : s;
    if (path.length > MAX_SHOWN_PATH) return `${shown(path.slice(0, MAX_SHOWN_PATH))}...`;
  }
  return shown(path);
}

const shown = (s: string) => s.replace(new RegExp(LONE_SURROGATE, "g"), "\uFFFD").replaceAll("\u0000", "\\u0000");
