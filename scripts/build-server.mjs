// Compiles the production server (the lean front, server/http/main.ts, and everything it imports
// from server/) into one ES module, dist/server/main.mjs, so `npm start` runs plain JavaScript: no
// TypeScript compiler in the serving process (faster start, less memory). Packages stay in
// node_modules, loaded by Node as usual. `npm run build` runs this after `next build`.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = path.join(root, "dist", "server");
export const SERVER_BUNDLE = path.join(OUT_DIR, "main.mjs");

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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildServer();
  console.log(`server compiled to ${path.relative(root, SERVER_BUNDLE)}`);
}
