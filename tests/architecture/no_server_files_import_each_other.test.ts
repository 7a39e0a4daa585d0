// No file of server/ reaches itself through its imports: not two files importing each other, nor a
// longer loop. Such a loop makes what a module sees at load time depend on which file was loaded
// first (a value imported from a file still being evaluated is undefined), and says two files are
// one piece split in the wrong place. Type-only imports, re-exports and dynamic import() count.
import path from "node:path";
import { describe, expect, test } from "vitest";
import { graphOf, importsOf, loops, SERVER, sourceFiles } from "./server-imports";

function fileGraph(): Map<string, Set<string>> {
  const edges = sourceFiles().flatMap((file) =>
    importsOf(file)
      .filter((i) => i.target.startsWith(SERVER + path.sep))
      .map((i) => [path.relative(SERVER, file), path.relative(SERVER, i.target)] as const),
  );
  return graphOf(edges);
}

describe("server files", () => {
  test("no_file_reaches_itself_through_its_imports", () => {
    const graph = fileGraph();
    // The reader sees the graph: a few edges known to exist.
    expect(graph.get("lib/errors.ts")?.has("lib/field-messages.ts")).toBe(true);
    expect(graph.get("webhooks/engine.ts")?.has("webhooks/embedded-worker.ts")).toBe(true);
    expect(loops(graph)).toEqual([]);
  });

  test("the_reader_counts_type_imports_reexports_and_dynamic_imports", () => {
    const file = path.join(SERVER, "lib/example.ts");
    const text = [
      'import type { A } from "./errors";',
      'export { b } from "./wire";',
      'const c = await import("./log");',
      'import "./settings";',
      'import { z } from "zod";',
    ].join("\n");
    expect(importsOf(file, text).map((i) => path.relative(SERVER, i.target))).toEqual(["lib/errors.ts", "lib/wire.ts", "lib/log.ts", "lib/settings.ts"]);
  });

  test("a_two_file_loop_and_a_longer_one_are_both_reported", () => {
    const graph = graphOf([
      ["a.ts", "b.ts"],
      ["b.ts", "a.ts"],
      ["c.ts", "d.ts"],
      ["d.ts", "e.ts"],
      ["e.ts", "c.ts"],
      ["e.ts", "f.ts"],
    ]);
    expect(loops(graph)).toEqual([
      ["a.ts", "b.ts"],
      ["c.ts", "d.ts", "e.ts"],
    ]);
  });
});
