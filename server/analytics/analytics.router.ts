import { router, tenantProcedure } from "../trpc/trpc";
import { weeklyRollupInput, weeklyRollupSchema } from "./analytics.types";
import { previousPeriodTotals, weeklyRollup } from "./analytics.service";

const TAGS = ["Analytics"];

const ROLLUP_DESCRIPTION = `Counts for the last \`days\` UTC days (the days ending with today, so today is partial), in total and per day (\`daily\`, oldest first, zero-filled).

How each count is dated:
- conversations \`total\` / \`by_channel\`: \`created_at\`; \`closed\`: \`closed_at\` of conversations that are closed now (reopening clears it); \`handoffs\`: the lead's \`handoff_requested_at\` (a repeated handoff of one lead counts once, on its latest day).
- leads \`created\`: \`created_at\`; \`qualified\`: \`qualified_at\` (when the lead first left \`new\`); \`converted\`: leads whose status is \`converted\`, on the day they last moved to it (later edits do not move them).
- appointments \`booked\`: \`created_at\`; \`cancelled\` / \`completed\`: \`updated_at\` (these statuses are terminal, so that is when the status was set).
- messages \`inbound\` / \`outbound\`: \`created_at\`.
- csat \`responses\` / \`average_score\`: the answers' \`created_at\` (\`average_score\` is the mean score, 2 decimals; null without answers).

\`conversion_rate\` is a cohort rate: of the leads created in the period (or on that day, in \`daily\`), the share whose status is now \`converted\`, from 0 to 1 with 4 decimals; null when no lead was created.`;

export const analyticsRouter = router({
  weeklyRollup: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/analytics/weekly-rollup",
        tags: TAGS,
        summary: "Activity counts per UTC day",
        description: ROLLUP_DESCRIPTION,
        protect: true,
      },
    })
    .input(weeklyRollupInput)
    .output(weeklyRollupSchema)
    .query(({ ctx, input }) => weeklyRollup(ctx.db, input)),
  /** Dashboard only (no REST route): the totals of the same number of days just before, for comparison. */
  previousPeriod: tenantProcedure("read")
    .input(weeklyRollupInput)
    .query(({ ctx, input }) => previousPeriodTotals(ctx.db, input)),
});
