// Compiles the production server (the lean front, server/http/main.ts, and everything it imports
// from server/) into one ES module, dist/server/main.mjs, so `npm start` runs plain JavaScript: no
// TypeScript compiler in the serving process (faster start, less memory). Packages stay in
// node_modules, loaded by Node as usual. `npm run build` runs this after `next build`.
// Then, with the compiled server, the embedded database's template: dist/embedded-template, a new
// PGlite database with every migration applied and no rows, which a first embedded start copies.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = path.join(root, "dist", "server");
export const SERVER_BUNDLE = path.join(OUT_DIR, "main.mjs");
const EMBEDDED_TEMPLATE = path.join(root, "dist", "embedded-template");

/** `pkg/deep/path` of a package without an `exports` map works under tsx and CommonJS, not under Node's ESM resolver: name the file. */
function nodeResolvable(specifier) {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  const subpath = parts.slice(name.split("/").length).join("/");
  if (!subpath) return specifier;
  const dir = path.join(root, "node_modules", name);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  if (manifest.exports || path.extname(subpath)) return specifier;
  for (const candidate of [`${subpath}.js`, `${subpath}/index.js`]) if (existsSync(path.join(dir, candidate))) return `${name}/${candidate}`;
  return specifier;
}

const packagesExternal = {
  name: "packages-external",
  setup(b) {
    // Bare specifiers (not relative, not absolute, not the "@/" alias) are packages: leave them to Node.
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@/")) return undefined; // tsconfig's alias for this project's own files
      if (args.path.startsWith("#")) return undefined; // package.json "imports" (#server-only): bundled, as Node conditions pick
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      return { path: nodeResolvable(args.path), external: true };
    });
  },
};

export async function buildServer() {
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [path.join(root, "server/http/main.ts")],
    outdir: OUT_DIR,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    // Code loaded with `await import()` (and the packages only it imports) becomes a chunk of its
    // own, loaded at first use: a process never pays for the MCP SDK, Inngest or better-auth it does not use.
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "linked",
    tsconfig: path.join(root, "tsconfig.json"),
    plugins: [packagesExternal],
    logLevel: "warning",
    // Some packages still use `require` of builtins from ESM-converted code.
    banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
  });
  await esbuild.stop(); // its service process would otherwise live beside the server
  buildEmbeddedTemplate();
}

/**
 * Creates and migrates an embedded database with the compiled server's own code (its child mode
 * that prepares a database, here without the demo tenant), then puts it in place of the last one.
 */
function buildEmbeddedTemplate() {
  const work = mkdtempSync(path.join(root, "dist", ".embedded-template-"));
  const env = {
    ...process.env,
    TDP_PREPARE_EMBEDDED_DB: "1",
    DATA_DIR: work,
    EMBEDDED_DB_TEMPLATE: path.join(work, "none"),
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
  };
  for (const name of ["DATABASE_URL", "SKIP_MIGRATIONS"]) delete env[name];
  try {
    const run = spawnSync(process.execPath, [SERVER_BUNDLE], { cwd: root, env, stdio: "inherit" });
    if (run.status !== 0) throw new Error(`creating the embedded database template failed (exit code ${run.status})`);
    rmSync(EMBEDDED_TEMPLATE, { recursive: true, force: true });
    renameSync(path.join(work, "pglite"), EMBEDDED_TEMPLATE);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildServer();
  console.log(`server compiled to ${path.relative(root, SERVER_BUNDLE)}, embedded database template in ${path.relative(root, EMBEDDED_TEMPLATE)}`);
}
