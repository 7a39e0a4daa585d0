// Whether the database can be reached, as this process sees it: a circuit breaker. Once a
// connection failure is seen (lib/database-errors.ts classifies them), a probe checks the server
// on a connection of its own; while it fails, database calls fail at once (no request waits for a
// connection that cannot come), and the probe keeps checking so calls resume within
// PROBE_INTERVAL_MS of the server's return.
import { log } from "../lib/log";
import { DatabaseUnavailableError, isDatabaseTimeout, isDatabaseUnavailable } from "../lib/database-errors";

const PROBE_INTERVAL_MS = 500;

type Probe = () => Promise<void>;
const state: { probe?: Probe | null; down?: boolean; probing?: Promise<void> | null } = {};

/** Registers how to check the server (client.ts, on opening PostgreSQL); `null` on close. */
export function watchDatabase(probe: Probe | null): void {
  state.probe = probe;
  state.down = false;
}

/** Fails at once while the database is known to be unreachable. */
export function assertDatabaseReachable(): void {
  if (state.down) throw new DatabaseUnavailableError();
}

export const databaseKnownDown = () => state.down === true;

/**
 * Called with a failed call's error: a connection failure starts the probe (if none is running).
 * A timeout (no connection within the connect timeout, or the watchdog giving a silent server up)
 * opens the breaker at once: the probe would only confirm it after another timeout, and meanwhile
 * each call of a request would wait its own.
 */
export function noteDatabaseError(err: unknown): void {
  const probe = state.probe;
  if (!probe || !isDatabaseUnavailable(err)) return;
  if (!state.down && isDatabaseTimeout(err)) {
    log.warn({ error: err }, "database unreachable: answering 503 until it is back");
    state.down = true;
  }
  if (state.probing) return;
  state.probing = probeUntilReachable(probe).finally(() => {
    state.probing = null;
  });
}

async function probeUntilReachable(probe: Probe): Promise<void> {
  while (state.probe === probe) {
    try {
      await probe();
      if (state.down) log.info("database reachable again");
      state.down = false;
      return;
    } catch (err) {
      if (state.probe !== probe) return;
      if (!state.down) {
        log.warn({ error: err }, "database unreachable: answering 503 until it is back");
      }
      state.down = true;
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
  }
}
