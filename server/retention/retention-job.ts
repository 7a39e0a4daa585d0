// The retention job: the purge of what is past its retention, then the tenant deletions that are
// due. Every server process runs it every RETENTION_PURGE_INTERVAL_MS (the embedded engine's way of
// running background work, server/lib/periodic-job.ts); with the Inngest engine an hourly cron
// function runs the same (retention.inngest.ts). Processes running it at once share the work (their
// batches take rows with SKIP LOCKED) or repeat a delete that finds nothing: harmless either way.
import { startPeriodicJob, stopPeriodicJob, type PeriodicJob } from "../lib/periodic-job";
import { setting } from "../lib/settings";
import { continueDueDeletions } from "../tenants/lifecycle";
import { purgeExpired, type PurgeCounts } from "./retention";

const JOB = "retention purge";
let stopping = false;
const shouldStop = () => stopping;

/** One run: the purge, then the due tenant deletions (each stops between batches on shutdown). */
export async function runRetentionJob(): Promise<{ purged: PurgeCounts; tenants_deleted: string[] }> {
  const purged = await purgeExpired({ shouldStop });
  const tenantsDeleted = await continueDueDeletions({ shouldStop });
  return { purged, tenants_deleted: tenantsDeleted };
}

export function startRetentionJob(intervalMs = setting("RETENTION_PURGE_INTERVAL_MS")): PeriodicJob {
  stopping = false;
  return startPeriodicJob(JOB, intervalMs, runRetentionJob);
}

/** Graceful shutdown: the run in progress stops after its current batch (the next run continues). */
export async function stopRetentionJob(): Promise<void> {
  stopping = true;
  await stopPeriodicJob(JOB);
}
