// `prisma generate` needs no schema engine, but the CLI looks for one first; a stub satisfies it
// (the real engine is a download that this environment cannot make).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const stub = fileURLToPath(new URL("./schema-engine-stub.sh", import.meta.url));
const result = spawnSync("npx", ["prisma", "generate"], {
  stdio: "inherit",
  env: { PRISMA_SCHEMA_ENGINE_BINARY: stub, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1", ...process.env },
});
process.exit(result.status ?? 1);
