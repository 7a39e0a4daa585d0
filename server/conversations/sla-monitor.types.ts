// The handoff SLA setting's schemas, apart from the monitor so the dashboard's form can validate with
// them in the browser.
import { z } from "zod";

export const DEFAULT_HANDOFF_SLA_MINUTES = 15;
/** A week: longer than that is no response-time target. (A check constraint holds the same bounds.) */
export const MAX_HANDOFF_SLA_MINUTES = 10_080;

const slaMessage = `must be an integer from 1 to ${MAX_HANDOFF_SLA_MINUTES}`;
export const handoffSlaInput = z.strictObject({
  handoff_sla_minutes: z
    .number({ error: slaMessage })
    .int({ message: slaMessage })
    .min(1, { message: slaMessage })
    .max(MAX_HANDOFF_SLA_MINUTES, { message: slaMessage })
    .describe("Minutes a customer may wait for an operator after a handoff before `sla.breached`"),
});

export const handoffSlaSchema = z.object({ handoff_sla_minutes: z.number().int().min(1).max(MAX_HANDOFF_SLA_MINUTES) });
export type HandoffSla = z.infer<typeof handoffSlaSchema>;
