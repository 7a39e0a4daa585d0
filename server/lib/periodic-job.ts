// Background work every server process repeats on an interval (the handoff SLA check, tool-call
// pruning, the outbound send recovery): one run at a time (a tick while the previous run is still going is skipped), a failure
// logged and tried again at the next tick, and a stop that waits for the run in progress, so a
// graceful shutdown never closes the database under it.
import { log } from "./log";

export type PeriodicJob = {
  /** No further runs; resolves once the run in progress (if any) has ended. */
  stop(): Promise<void>;
};

// One of each job per process (starting one again replaces the first).
const jobs = new Map<string, PeriodicJob>();

/** Runs `run` every `intervalMs` (0 or less: never). `name` names it in logs. */
export function startPeriodicJob(name: string, intervalMs: number, run: () => Promise<unknown>): PeriodicJob {
  void jobs.get(name)?.stop();
  if (!(intervalMs > 0)) return { stop: async () => {} };
  let inProgress: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inProgress) return;
    inProgress = run()
      .then(
        () => {},
        (err) => log.error({ error: err }, `${name} failed`),
      )
      .finally(() => {
        inProgress = null;
      });
  }, intervalMs);
  timer.unref();
  const job: PeriodicJob = {
    async stop() {
      clearInterval(timer);
      if (jobs.get(name) === job) jobs.delete(name);
      await inProgress;
    },
  };
  jobs.set(name, job);
  return job;
}

/** Stops the job named `name`, waiting for its run in progress. */
export async function stopPeriodicJob(name: string): Promise<void> {
  await jobs.get(name)?.stop();
}
