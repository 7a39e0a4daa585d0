// The server's folders form layers, and every import points down or sideways within a layer,
// never in a loop (docs/architecture.md draws them). This reads every import of server/ (type-only
// ones too) and fails naming the offending files.
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { graphOf, importsOf, loops as loopsOf, SERVER, sourceFiles } from "./server-imports";

/** Lower layers first. A folder may import its own layer and those below it. */
const LAYERS: string[][] = [
  ["lib"],
  ["observability"],
  ["db"],
  ["crypto", "tenants", "audit", "ratelimit", "outbox", "auth", "idempotency"],
  ["trpc"],
  [
    "offerings",
    "appointments",
    "analytics",
    "csat",
    "channels",
    "conversations",
    "leads",
    "calls",
    "crm",
    "dashboard",
    "events",
    "webhooks",
    "tools",
    "erasure",
    "export",
    "retention",
  ],
  ["receivers", "demo"],
  ["http", "cli"],
];
const layerOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));

type Edge = { from: string; to: string; file: string; spec: string };

const folderOf = (file: string) => path.relative(SERVER, file).split(path.sep)[0];

function folderEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles()) {
    for (const { spec, target } of importsOf(file)) {
      if (!target.startsWith(SERVER + path.sep)) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) edges.push({ from, to, file: path.relative(SERVER, file), spec });
    }
  }
  return edges;
}

/** Folders on a loop (strongly connected components of more than one folder). */
const loops = (edges: Edge[]) => loopsOf(graphOf(edges.map((e) => [e.from, e.to] as const)));

describe("server folders", () => {
  const edges = folderEdges();

  test("every folder of server/ has a layer", () => {
    const folders = readdirSync(SERVER, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([]);
    expect(readdirSync(SERVER).filter((f) => /\.tsx?$/.test(f))).toEqual([]);
  });

  test("no import points to a higher layer", () => {
    const upward = edges.filter((e) => (layerOf.get(e.to) ?? 0) > (layerOf.get(e.from) ?? 0)).map((e) => `${e.file} -> ${e.spec}`);
    expect(upward).toEqual([]);
  });

  test("no folders import each other in a loop", () => {
    expect(loops(edges)).toEqual([]);
  });

  test("the check sees a loop when there is one", () => {
    const edge = (from: string, to: string): Edge => ({ from, to, file: `${from}/x.ts`, spec: `../${to}/y` });
    expect(loops([edge("leads", "conversations"), edge("conversations", "channels"), edge("channels", "leads")])).toEqual([
      ["channels", "conversations", "leads"],
    ]);
  });
});
