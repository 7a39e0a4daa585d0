// Under `next start` the server process is started by the first request (app/_lib/server-route.ts)
// and then lives on. A first start that met an unreachable database used to be remembered as failed,
// so every later request failed until a restart that nothing asked for (/healthz stays 200).
import { afterAll, describe, expect, it } from "vitest";
import { probeAnswer } from "../../server/http/probes";
import { closeServerProcess, startServerProcess, stopBackgroundWork } from "../../server/http/startup";

describe.skipIf(!process.env.DATABASE_URL)("the server process's start (PostgreSQL: an unreachable server is one to point at)", () => {
  afterAll(async () => {
    await stopBackgroundWork(Date.now() + 5_000);
    await closeServerProcess();
  });

  it("a_start_that_failed_on_an_unreachable_database_is_tried_again_by_the_next_call_and_then_ready", async () => {
    const url = process.env.DATABASE_URL!;
    process.env.WEBHOOK_ENGINE = "off";
    process.env.DATABASE_CONNECT_TIMEOUT_MS = "500";
    process.env.SKIP_MIGRATIONS = ""; // as in production: the start reads the migrations, so it needs the server
    process.env.DATABASE_URL = "postgresql://postgres@127.0.0.1:1/postgres"; // nothing listens on port 1
    await expect(startServerProcess()).rejects.toThrow();
    await expect(startServerProcess()).rejects.toThrow(); // tried again, not a remembered failure

    process.env.DATABASE_URL = url;
    await expect(startServerProcess()).resolves.toBeUndefined();
    const ready = await probeAnswer("/readyz", "GET");
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ status: "ready", failing: [], checks: { database: "ok", webhook_engine: "off" } });
  });
});
