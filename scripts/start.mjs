// `npm start`: builds the Next app when there is no production build yet, then runs the lean
// front (server/http/main.ts) on HOST (default 127.0.0.1) and PORT (default 3000).
// A fresh clone needs nothing else: without DATABASE_URL the embedded PGlite under .data/ is used.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: process.env.NEXT_TELEMETRY_DISABLED ?? "1" };
const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");

if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
  console.log("No production build in .next/: running `next build` first (about a minute).");
  const build = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, env, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// tsx is loaded once at startup (it compiles each module on import, not per request).
const server = spawn(process.execPath, ["--import", "tsx", ...process.execArgv, path.join(root, "server/http/main.ts")], {
  cwd: root,
  env,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
