// Next's route bundle and the compiled server are separate module graphs: each has its own copy of
// server/http/startup.ts (and of the database client, the workers, the metrics listener). Issue 43:
// a request Next served beside the lean front started the server process a second time in the same
// process (every background job twice; with METRICS_PORT, EADDRINUSE and a 500 on every later
// request; on the embedded database a second writer on the same directory). The guard is
// process-wide: the copy that started the process keeps it, any other copy is refused and starts nothing.
import { afterAll, describe, expect, it, vi } from "vitest";

type Startup = typeof import("../../server/http/startup");

/** A fresh copy of the startup module (and of everything it imports), as another module graph has. */
async function anotherCopy(): Promise<Startup> {
  vi.resetModules();
  return import("../../server/http/startup");
}

describe("the server process's start", () => {
  let first: Startup | undefined;
  afterAll(async () => {
    await first?.stopBackgroundWork(Date.now() + 5_000);
    await first?.closeServerProcess();
  });

  it("a_second_copy_of_the_startup_module_is_refused_and_starts_nothing_while_the_first_serves_on", async () => {
    first = await anotherCopy();
    const firstProbes = await import("../../server/http/probes"); // the first copy's graph
    const second = await anotherCopy();
    expect(second).not.toBe(first);

    await expect(first.startServerProcess()).resolves.toBeUndefined();
    const refused = second.startServerProcess();
    await expect(refused).rejects.toThrow(first.STARTED_BY_ANOTHER_COPY);
    await expect(refused).rejects.toBeInstanceOf(second.ServerProcessStartedElsewhere);
    // Asked again, the second copy is still refused; the first copy's start is the one it made.
    await expect(second.startServerProcess()).rejects.toThrow(first.STARTED_BY_ANOTHER_COPY);
    await expect(first.startServerProcess()).resolves.toBeUndefined();

    // The first copy's process is whole: its readiness checks pass (database, webhook engine).
    const ready = await firstProbes.probeAnswer("/readyz", "GET");
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ status: "ready", failing: [], checks: { database: "ok", webhook_engine: "ok" } });
  });
});
