// No 'use client' file of app/ reaches a server-only module through what it imports at run time.
// A server-only module says so with `import "#server-only"` (server/lib/server-only/): in a browser
// bundle that import is a build error, so `next build` refuses such a reach too; this test names the
// chain of imports without a build, and keeps the modules that must carry the mark marked. Before
// it, the dashboard's forms pulled log.ts and settings.ts (pino, node:crypto) into the browser
// through the *.types.ts files' pagination import.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const MARK = "#server-only";
/** Modules that must never reach a browser: logging, settings (secrets among them), the database. */
const MUST_BE_MARKED = ["server/lib/log.ts", "server/lib/settings.ts", "server/db/database.ts", "server/db/location.ts"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

/**
 * The specifiers `text` imports at run time: import and export declarations, side-effect imports
 * and `import()`, but not what a bundler drops (`import type`, `export type`, and imports whose
 * every name is `type X`).
 */
function runtimeSpecifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      const typeOnly = clause?.isTypeOnly || (clause && !clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]!)) {
      found.push((node.arguments[0] as ts.StringLiteral).text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The project file a specifier names (relative or the "@/" alias), or null for a package. */
function resolveProjectFile(fromFile: string, spec: string): string | null {
  const base = spec.startsWith("@/") ? path.join(ROOT, spec.slice(2)) : spec.startsWith(".") ? path.resolve(path.dirname(fromFile), spec) : null;
  if (!base) return null;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? null;
}

type Graph = { imports: (file: string) => string[]; marked: (file: string) => boolean };

const projectGraph: Graph = {
  imports: (file) =>
    runtimeSpecifiers(file, readFileSync(file, "utf8"))
      .map((spec) => resolveProjectFile(file, spec))
      .filter((f): f is string => f !== null),
  marked: (file) => runtimeSpecifiers(file, readFileSync(file, "utf8")).includes(MARK),
};

/** Every marked module reachable from `roots`, each as the chain of imports that reaches it (root first). */
function serverOnlyReaches(roots: string[], graph: Graph): string[][] {
  const parent = new Map<string, string | null>(roots.map((r) => [r, null]));
  const queue = [...roots];
  const reached: string[][] = [];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (graph.marked(file)) {
      const chain: string[] = [];
      for (let f: string | null = file; f !== null; f = parent.get(f) ?? null) chain.unshift(f);
      reached.push(chain);
      continue; // what a marked module imports is already on the wrong side
    }
    for (const next of graph.imports(file)) {
      if (parent.has(next)) continue;
      parent.set(next, file);
      queue.push(next);
    }
  }
  return reached;
}

const clientComponents = () => sourceFiles(path.join(ROOT, "app")).filter((f) => /^\s*["']use client["']/.test(readFileSync(f, "utf8")));
const rel = (f: string) => path.relative(ROOT, f);

describe("client components and server-only modules", () => {
  test("no_client_component_reaches_a_server_only_module", () => {
    const roots = clientComponents();
    expect(roots.length).toBeGreaterThan(20);
    const chains = serverOnlyReaches(roots, projectGraph).map((chain) => chain.map(rel).join(" -> "));
    expect(chains).toEqual([]);
  });

  test("the_walk_reaches_the_server_files_the_dashboard_imports", () => {
    // The reader follows the "@/" alias into server/: the wire schemas the forms validate with are seen.
    const seen = new Set<string>();
    const queue = clientComponents();
    while (queue.length > 0) {
      const file = queue.shift() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      queue.push(...projectGraph.imports(file));
    }
    for (const f of ["server/webhooks/webhooks.types.ts", "server/audit/audit-log.types.ts", "server/lib/list-envelope.ts", "server/lib/errors.ts"])
      expect([...seen].map(rel)).toContain(f);
  });

  test("server_only_modules_carry_the_mark_and_the_browser_gets_next_s_guard", () => {
    for (const f of MUST_BE_MARKED) expect(projectGraph.marked(path.join(ROOT, f)), f).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const conditions = manifest.imports[MARK] as { browser: string; default: string };
    // The browser's variant imports Next's `server-only`, which Next turns into a build error in a client bundle.
    expect(runtimeSpecifiers("browser.js", readFileSync(path.join(ROOT, conditions.browser), "utf8"))).toEqual(["server-only"]);
    // Elsewhere (Node, tsx, vitest, Next's server side) it is a module with nothing in it.
    expect(runtimeSpecifiers("index.ts", readFileSync(path.join(ROOT, conditions.default), "utf8"))).toEqual([]);
  });

  test("type_only_imports_are_not_followed_and_the_rest_are", () => {
    const text = [
      'import type { A } from "./a";',
      'import { type B, type C } from "./b";',
      'import { type D, e } from "./c";',
      'export type { F } from "./d";',
      'export { g } from "./e";',
      'import "#server-only";',
      'const h = await import("@/server/lib/log");',
    ].join("\n");
    expect(runtimeSpecifiers("x.ts", text)).toEqual(["./c", "./e", "#server-only", "@/server/lib/log"]);
  });

  test("a_reach_through_a_types_file_is_reported_with_its_chain", () => {
    const edges: Record<string, string[]> = {
      "page.tsx": ["form.ts", "leads.types.ts"],
      "leads.types.ts": ["pagination.ts"],
      "pagination.ts": ["log.ts"],
      "log.ts": ["settings.ts"],
      "form.ts": [],
    };
    const graph: Graph = { imports: (f) => edges[f] ?? [], marked: (f) => f === "log.ts" || f === "settings.ts" };
    expect(serverOnlyReaches(["page.tsx"], graph)).toEqual([["page.tsx", "leads.types.ts", "pagination.ts", "log.ts"]]);
    expect(serverOnlyReaches(["form.ts"], graph)).toEqual([]);
  });
});
