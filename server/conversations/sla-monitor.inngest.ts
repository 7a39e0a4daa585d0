// The handoff SLA check as an Inngest cron function, served with the webhook function at
// /api/inngest (server/webhooks/inngest-engine.ts). It runs the same claim as the in-process
// monitor, so the two together (and any number of processes) still emit one `sla.breached` per handoff.
import type { Inngest } from "inngest";
import { checkHandoffSlas } from "./sla-monitor";

const SLA_CHECK_FUNCTION_ID = "check-handoff-sla";
/** Every minute: a breach is reported at most a minute late. */
const SLA_CHECK_CRON = "* * * * *";

export function createSlaCheckFunction(client: Inngest.Any) {
  return client.createFunction({ id: SLA_CHECK_FUNCTION_ID, retries: 0, triggers: [{ cron: SLA_CHECK_CRON }] }, async ({ step }) => ({
    breaches: await step.run("check", () => checkHandoffSlas()),
  }));
}
