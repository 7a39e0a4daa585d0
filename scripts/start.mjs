// `npm start`: the production server in this one process. Builds what is missing first: the Next app
// (`next build`, about a minute, once) and the compiled server (dist/server/, a second; rebuilt when
// a file under server/ is newer), then runs the lean front (server/http/main.ts) compiled, on HOST
// (default 127.0.0.1) and PORT (default 3000). A fresh clone needs nothing else: without
// DATABASE_URL the embedded PGlite under .data/ is used. package.json's `start` runs it with
// `--max-semi-space-size=16`: with Node 24's default V8 grew the young generation to 128 MB during
// start-up and kept it idle (docs/perf/2026-12-08-footprint.md); a flag a running process cannot set.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.env.NODE_ENV = "production";
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

const nextBuildId = path.join(root, process.env.NEXT_DIST_DIR || ".next", "BUILD_ID");
if (!existsSync(nextBuildId)) {
  console.log("No production build of the Next app yet: running `next build` first (about a minute).");
  const build = spawnSync(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** Newest modification time of the files under `dir`. */
function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

const { buildServer, SERVER_BUNDLE } = await import("./build-server.mjs");
if (!existsSync(SERVER_BUNDLE) || statSync(SERVER_BUNDLE).mtimeMs < newestMtime(path.join(root, "server"))) await buildServer();
await import(pathToFileURL(SERVER_BUNDLE).href);
