// tRPC's and zod's undocumented shapes (`router._def`, `procedure._def`, `schema._zod.def`) are read
// only by server/trpc/internals.ts, whose test (tests/trpc/internals_keep_their_shape.test.ts) fails
// when an upgrade changes them. Any other file reaching for them is named here.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const ADAPTER = "server/trpc/internals.ts";
const INTERNALS = /\b_def\b|\b_zod\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "generated" || e.name === "node_modules") return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(tsx?|mts|mjs)$/.test(e.name) ? [p] : [];
  });
}

const readers = (dirs: string[]) =>
  dirs
    .flatMap((d) => sourceFiles(path.join(ROOT, d)))
    .map((f) => path.relative(ROOT, f))
    .filter((f) => INTERNALS.test(readFileSync(path.join(ROOT, f), "utf8")));

describe("tRPC and zod internals", () => {
  test("only_the_adapter_reads_them", () => {
    expect(readers(["server", "app", "scripts"]).filter((f) => f !== ADAPTER)).toEqual([]);
    // The check sees them where they are.
    expect(readers(["server"])).toContain(ADAPTER);
  });
});
