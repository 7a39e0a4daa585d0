// `npm run client:types` with no server at API_BASE_URL: one plain line naming the address and what
// to do, exit code 1, nothing written (not fetch's stack).
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/http-mounts";

const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe("npm run client:types", () => {
  it("no_server_at_API_BASE_URL_is_one_line_and_exit_1", async () => {
    const port = await closedPort();
    const res = spawnSync(process.execPath, [path.join(ROOT, "scripts/client-types.mjs")], {
      env: { ...process.env, API_BASE_URL: `http://127.0.0.1:${port}` },
      encoding: "utf8",
    });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      `client:types: no server answers at http://127.0.0.1:${port} (ECONNREFUSED): start it with \`npm start\`, or set API_BASE_URL to where it runs (e.g. API_BASE_URL=http://127.0.0.1:3100)\n`,
    );
  });
});
