// The server's folders form layers, and every import points down or sideways within a layer,
// never in a loop (docs/architecture.md draws them). This reads every import of server/ (type-only
// ones too) and fails naming the offending files.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const SERVER = path.resolve(__dirname, "../../server");

/** Lower layers first. A folder may import its own layer and those below it. */
const LAYERS: string[][] = [
  ["lib"],
  ["db"],
  ["crypto", "tenants", "audit", "ratelimit", "outbox", "auth", "idempotency"],
  ["trpc"],
  ["offerings", "appointments", "analytics", "csat", "channels", "conversations", "leads", "calls", "crm", "dashboard", "events", "webhooks", "tools"],
  ["receivers", "demo"],
  ["http", "cli"],
];
const layerOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));

type Edge = { from: string; to: string; file: string; spec: string };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "generated") return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

const folderOf = (file: string) => path.relative(SERVER, file).split(path.sep)[0];

function folderEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SERVER)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.[^"']+)["']/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (!target.startsWith(SERVER + path.sep)) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) edges.push({ from, to, file: path.relative(SERVER, file), spec: m[1] });
    }
  }
  return edges;
}

/** Folders on a loop (Tarjan's strongly connected components of more than one folder). */
function loops(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

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
