// `npm run client:types`: the typed client's types (examples/typed-client/generated/api.d.ts) from
// the OpenAPI document a running server serves, at API_BASE_URL (default http://127.0.0.1:3000, where
// `npm start` listens by default). A server that does not answer is one plain line and exit code 1.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const base = (process.env.API_BASE_URL || "http://127.0.0.1:3000").replace(/\/+$/, "");
const url = `${base}/api/v1/openapi.json`;
const fail = (message) => {
  process.stderr.write(`client:types: ${message}\n`);
  process.exit(1);
};

let res;
try {
  res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
} catch (err) {
  const reason = err?.cause?.code ?? err?.name ?? "no answer";
  fail(`no server answers at ${base} (${reason}): start it with \`npm start\`, or set API_BASE_URL to where it runs (e.g. API_BASE_URL=http://127.0.0.1:3100)`);
}
if (!res.ok) fail(`${url} answered ${res.status}: is API_BASE_URL (${base}) this platform's server?`);

const out = path.join(root, "examples", "typed-client", "generated", "api.d.ts");
const bin = path.join(root, "node_modules", "openapi-typescript", "bin", "cli.js");
const run = spawnSync(process.execPath, [bin, url, "-o", out], { stdio: "inherit" });
process.exit(run.status ?? 1);
