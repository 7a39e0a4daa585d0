// The production start (package.json's `start`, what `npm start` runs) on a fresh embedded database,
// tracing and metrics off, idle after its first start's seeding: V8's young generation stays at the
// 16-MB semi-spaces the start command sets (Node 24's default let it grow to 64 MB each during
// start-up and keep them, about 100 MB of the idle process's RSS: docs/perf/2026-12-08-footprint.md),
// and no library its settings leave unused was loaded: not the OpenTelemetry SDK (only the API, whose
// calls are no-ops), not a PostgreSQL driver (server/db/postgres.ts, with DATABASE_URL), not a shared
// rate-limit store's client (REDIS_URL or Upstash's settings), not prom-client (METRICS_PORT).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { requireNextBuild, ROOT } from "../helpers/http-mounts";
import { eventually } from "../helpers/webhook-consumer";

requireNextBuild();

let proc: ChildProcess | undefined;

afterAll(async () => {
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((r) => proc!.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
});

describe("npm start, idle", () => {
  it("young_generation_within_32_mb_and_no_tracing_sdk_postgresql_driver_redis_client_or_prom_client_loaded", async () => {
    const [command, ...args] = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start.split(" ");
    expect(command).toBe("node");
    const dataDir = mkdtempSync(path.join(tmpdir(), "tdp-idle-"));
    const probeOut = path.join(dataDir, "probe.json");
    const port = await freePort();
    const preload = pathToFileURL(path.join(ROOT, "tests/helpers/heap-and-modules-preload.mjs")).href;
    const script = args.pop();
    const env: NodeJS.ProcessEnv = {
      NODE_ENV: "production",
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      HOST: "127.0.0.1",
      PORT: String(port),
      HEAP_PROBE_OUT: probeOut,
    };
    const child = spawn(process.execPath, [...args, "--import", preload, script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    proc = child;
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    // Ready, and the demo tenant seeded behind it (its key printed): the start-up's allocations are done.
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited: ${out}`);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        return ready && out.includes("Demo API key");
      },
      120_000,
      100,
    );
    child.kill("SIGUSR2");
    await eventually(async () => out.includes("heap probe written"), 10_000, 20);
    const probe = JSON.parse(readFileSync(probeOut, "utf8")) as { loaded: string[]; spacesMb: Record<string, number> };

    expect(probe.spacesMb.new_space).toBeLessThanOrEqual(32);
    const packages = new Set(probe.loaded.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter(Boolean));
    expect([...packages].filter((p) => p!.startsWith("@opentelemetry/") && p !== "@opentelemetry/api" && p !== "@opentelemetry/semantic-conventions")).toEqual(
      [],
    );
    // Nor a PostgreSQL driver (no DATABASE_URL), a shared rate-limit store's client (no REDIS_URL) or prom-client (no METRICS_PORT).
    const unneeded = ["pg", "postgres", "@prisma/adapter-pg", "ioredis", "@upstash/redis", "@upstash/ratelimit", "prom-client"];
    expect([...packages].filter((p) => unneeded.includes(p!))).toEqual([]);
  }, 180_000);
});
