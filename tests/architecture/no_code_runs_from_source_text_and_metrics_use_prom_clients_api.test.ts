// The server runs no code built from source text (`new Function`, a worker thread given
// `eval: true`): what it runs is in its files, type-checked and bundled. And its metrics go through
// prom-client's documented classes (Counter, Gauge, Histogram), never an object of its own handed to
// a registry by `registerMetric`. Any file doing either is named here.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const FROM_SOURCE_TEXT = /\bnew Function\s*\(|\beval:\s*true\b/;
const HAND_REGISTERED_METRIC = /\.registerMetric\s*\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "generated" || e.name === "node_modules") return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(tsx?|mts|mjs)$/.test(e.name) ? [p] : [];
  });
}

const filesMatching = (pattern: RegExp) =>
  ["server", "app"]
    .flatMap((d) => sourceFiles(path.join(ROOT, d)))
    .filter((f) => pattern.test(readFileSync(f, "utf8")))
    .map((f) => path.relative(ROOT, f));

describe("the server's code", () => {
  test("runs_nothing_from_source_text", () => {
    expect(filesMatching(FROM_SOURCE_TEXT)).toEqual([]);
  });

  test("registers_metrics_only_through_prom_clients_classes", () => {
    expect(filesMatching(HAND_REGISTERED_METRIC)).toEqual([]);
  });
});
