// app/'s folders (the shared `_lib` and `_ui`, and each page's folder) import each other in one
// direction: `_ui` may use `_lib`, pages use both, and nothing points back, so a component can be read
// without its callers. Fails naming the folders on a loop.
import path from "node:path";
import { expect, test } from "vitest";
import { graphOf, importsOf, loops, sourceFiles } from "./server-imports";

const APP = path.resolve(__dirname, "../../app");
const folderOf = (file: string) => path.relative(APP, file).split(path.sep)[0];

test("no folders of app import each other in a loop", () => {
  const edges = sourceFiles(APP).flatMap((file) =>
    importsOf(file)
      .filter(({ target }) => target.startsWith(APP + path.sep))
      .map(({ target }) => [folderOf(file), folderOf(target)] as const)
      .filter(([from, to]) => from !== to && !/\.tsx?$/.test(from) && !/\.tsx?$/.test(to)),
  );
  expect(edges.length).toBeGreaterThan(0);
  expect(loops(graphOf(edges))).toEqual([]);
});
