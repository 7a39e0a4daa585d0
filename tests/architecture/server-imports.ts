// Reads server/'s import graph for the architecture tests: every relative import of every source
// file (type-only imports, re-exports and dynamic `import()` too), and the strongly connected
// components of a graph (Tarjan), which are its loops.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

export const SERVER = path.resolve(__dirname, "../../server");

/** Every .ts/.tsx file under `dir`, the generated Prisma client left out. */
export function sourceFiles(dir: string = SERVER): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "generated") return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)["'](\.[^"']+)["']/g;

/** The file a relative specifier names, as TypeScript resolves it (with or without extension, or a folder's index). */
function resolveSpecifier(fromFile: string, spec: string): string {
  const base = path.resolve(path.dirname(fromFile), spec);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? base;
}

export type Import = { file: string; spec: string; target: string };

/** Every relative import in `file` (the specifier as written, and the absolute file it names). */
export function importsOf(file: string, text: string = readFileSync(file, "utf8")): Import[] {
  return [...text.matchAll(IMPORT)].map((m) => ({ file, spec: m[1], target: resolveSpecifier(file, m[1]) }));
}

/** Components of more than one node, each sorted (Tarjan's strongly connected components). */
export function loops(next: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** A graph from edges: node -> the nodes it points to. */
export function graphOf(edges: Iterable<readonly [string, string]>): Map<string, Set<string>> {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) next.set(from, (next.get(from) ?? new Set()).add(to));
  return next;
}
