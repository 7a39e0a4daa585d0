// Whether the database can be reached, as this process sees it: a circuit breaker. Once a
// connection failure is seen (shared/database-errors.ts classifies them), a probe checks the server
// on a connection of its own; while it fails, database calls fail at once (no request waits for a
// connection that cannot come), and the probe keeps checking so calls resume within
// PROBE_INTERVAL_MS of the server's return.
import { log } from "../shared/log";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "../shared/database-errors";

const PROBE_INTERVAL_MS = 500;

type Probe = () => Promise<void>;
// On globalThis: Next's bundled copy of this module and the lean front's copy share one process.
const state = globalThis as { __tenantDataDbProbe?: Probe | null; __tenantDataDbDown?: boolean; __tenantDataDbProbing?: Promise<void> | null };

/** Registers how to check the server (client.ts, on opening PostgreSQL); `null` on close. */
export function watchDatabase(probe: Probe | null): void {
  state.__tenantDataDbProbe = probe;
  state.__tenantDataDbDown = false;
}

/** Fails at once while the database is known to be unreachable. */
export function assertDatabaseReachable(): void {
  if (state.__tenantDataDbDown) throw new DatabaseUnavailableError();
}

export const databaseKnownDown = () => state.__tenantDataDbDown === true;

/** Called with a failed call's error: a connection failure starts the probe (if none is running). */
export function noteDatabaseError(err: unknown): void {
  const probe = state.__tenantDataDbProbe;
  if (!probe || state.__tenantDataDbProbing || !isDatabaseUnavailable(err)) return;
  state.__tenantDataDbProbing = probeUntilReachable(probe).finally(() => {
    state.__tenantDataDbProbing = null;
  });
}

async function probeUntilReachable(probe: Probe): Promise<void> {
  while (state.__tenantDataDbProbe === probe) {
    try {
      await probe();
      if (state.__tenantDataDbDown) log.info("database reachable again");
      state.__tenantDataDbDown = false;
      return;
    } catch (err) {
      if (state.__tenantDataDbProbe !== probe) return;
      if (!state.__tenantDataDbDown) {
        log.warn("database unreachable: answering 503 until it is back", { error: err instanceof Error ? err.message : String(err) });
      }
      state.__tenantDataDbDown = true;
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
  }
}
