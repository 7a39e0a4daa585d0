// The retention job as an Inngest cron function, served with the webhook function at /api/inngest
// (server/webhooks/inngest-engine.ts). It runs what each server process's periodic job runs; the two
// together only share or repeat batches (retention-job.ts).
import type { Inngest } from "inngest";
import { runRetentionJob } from "./retention-job";

export const RETENTION_FUNCTION_ID = "retention-purge";
/** Hourly, off the hour. */
export const RETENTION_CRON = "17 * * * *";

export function createRetentionFunction(client: Inngest.Any) {
  return client.createFunction({ id: RETENTION_FUNCTION_ID, retries: 2, triggers: [{ cron: RETENTION_CRON }] }, async ({ step }) =>
    step.run("purge", () => runRetentionJob()),
  );
}
