import { z } from "zod";
import { CHANNELS } from "../lib/conversation-channels";

const MAX_ROLLUP_DAYS = 90;
export const DEFAULT_ROLLUP_DAYS = 7;

const daysMessage = `must be an integer from 1 to ${MAX_ROLLUP_DAYS}`;
export const weeklyRollupInput = z.object({
  days: z
    .number({ error: daysMessage })
    .int({ message: daysMessage })
    .min(1, { message: daysMessage })
    .max(MAX_ROLLUP_DAYS, { message: daysMessage })
    .optional()
    .describe(`Number of UTC days, ending with today, 1 to ${MAX_ROLLUP_DAYS}. Default ${DEFAULT_ROLLUP_DAYS}.`),
});

const count = (description: string) => z.number().int().nonnegative().describe(description);

const byChannelSchema = z
  .object(
    Object.fromEntries(CHANNELS.map((c) => [c, count(`Conversations created on \`${c}\``)])) as Record<(typeof CHANNELS)[number], ReturnType<typeof count>>,
  )
  .meta({ id: "AnalyticsConversationsByChannel" });

const analyticsCountsSchema = z
  .object({
    conversations: z
      .object({
        total: count("Conversations created (by `created_at`)"),
        by_channel: byChannelSchema,
        handoffs: count("Handoffs requested (leads by `handoff_requested_at`, the latest request of each lead)"),
        closed: count("Conversations currently closed, by `closed_at` (a reopened conversation no longer counts)"),
      })
      .meta({ id: "AnalyticsConversationCounts" }),
    leads: z
      .object({
        created: count("Leads created (by `created_at`)"),
        qualified: count("Leads qualified (by `qualified_at`: the moment a lead first left `new`)"),
        converted: count("Leads whose status is `converted`, on the day they last moved to it (later edits do not move them)"),
        conversion_rate: z
          .number()
          .min(0)
          .max(1)
          .nullable()
          .describe("Of the leads created in the period, the share whose status is now `converted` (0 to 1, 4 decimals); null when no lead was created"),
      })
      .meta({ id: "AnalyticsLeadCounts" }),
    appointments: z
      .object({
        booked: count("Appointments created (by `created_at`)"),
        cancelled: count("Appointments cancelled, by `updated_at` (terminal: never changed afterwards)"),
        completed: count("Appointments completed, by `updated_at` (terminal: never changed afterwards)"),
      })
      .meta({ id: "AnalyticsAppointmentCounts" }),
    messages: z
      .object({
        inbound: count("Inbound messages (by `created_at`)"),
        outbound: count("Outbound messages (by `created_at`), whatever their delivery status"),
      })
      .meta({ id: "AnalyticsMessageCounts" }),
    csat: z
      .object({
        responses: count("Customer satisfaction answers recorded (by `created_at`; `record_csat`)"),
        average_score: z.number().min(1).max(5).nullable().describe("Mean score of those answers (1 to 5, 2 decimals); null when there was none"),
      })
      .meta({ id: "AnalyticsCsatCounts" }),
  })
  .meta({ id: "AnalyticsCounts" });

const analyticsDaySchema = analyticsCountsSchema.extend({ date: z.string().describe("The UTC day, YYYY-MM-DD") }).meta({ id: "AnalyticsDay" });

export const weeklyRollupSchema = z
  .object({
    days: z.number().int().describe("Number of UTC days covered"),
    start_date: z.string().describe("First UTC day covered, YYYY-MM-DD"),
    end_date: z.string().describe("Last UTC day covered (today, so far), YYYY-MM-DD"),
    totals: analyticsCountsSchema.describe("Counts over the whole period"),
    daily: z.array(analyticsDaySchema).describe("One entry per UTC day, oldest first, days without activity as zeros"),
  })
  .meta({ id: "WeeklyRollup" });

export type AnalyticsCounts = z.infer<typeof analyticsCountsSchema>;
export type AnalyticsDay = z.infer<typeof analyticsDaySchema>;
export type WeeklyRollup = z.infer<typeof weeklyRollupSchema>;
