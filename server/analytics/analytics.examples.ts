// Examples for the OpenAPI document (see server/lib/examples.ts).
import type { OperationExamples } from "../lib/examples";
import type { AnalyticsCounts } from "./analytics.types";

const counts: AnalyticsCounts = {
  conversations: { total: 12, by_channel: { voice: 5, sms: 2, whatsapp: 4, webchat: 1, email: 0 }, handoffs: 2, closed: 7 },
  leads: { created: 6, qualified: 4, converted: 1, conversion_rate: 0.1667 },
  appointments: { booked: 3, cancelled: 1, completed: 1 },
  messages: { inbound: 48, outbound: 51 },
  csat: { responses: 3, average_score: 4.33 },
};

export const analyticsExamples: OperationExamples = {
  "GET /analytics/weekly-rollup": {
    query: { days: 1 },
    response: { days: 1, start_date: "2026-11-21", end_date: "2026-11-21", totals: counts, daily: [{ ...counts, date: "2026-11-21" }] },
  },
};
