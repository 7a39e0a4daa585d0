// The application router: every domain's procedures, served to the dashboard at /api/trpc and,
// for those with `openapi` meta, as the REST contract at /api/v1.
import { router } from "../trpc/trpc";
import { offeringsRouter } from "../offerings/offerings.router";
import { appointmentsRouter } from "../appointments/appointments.router";
import { conversationsRouter } from "../conversations/conversations.router";
import { leadsRouter } from "../leads/leads.router";
import { dashboardRouter } from "../dashboard/dashboard.router";
import { analyticsRouter } from "../analytics/analytics.router";
import { webhooksRouter } from "../webhooks/webhooks.router";
import { webhookEndpointsRouter } from "../webhooks/webhook-endpoints.router";
import { crmRouter } from "../crm/crm.router";
import { eventsRouter } from "../events/events.router";
import { channelsRouter } from "../channels/channels.router";
import { callsRouter } from "../calls/calls.router";
import { assistantRouter } from "../tools/assistant.router";
import { erasureRouter } from "../erasure/erasure.router";
import { retentionRouter } from "../retention/retention.router";

export const appRouter = router({
  offerings: offeringsRouter,
  appointments: appointmentsRouter,
  conversations: conversationsRouter,
  leads: leadsRouter,
  dashboard: dashboardRouter,
  analytics: analyticsRouter,
  webhooks: webhooksRouter,
  webhookEndpoints: webhookEndpointsRouter,
  crm: crmRouter,
  events: eventsRouter,
  channels: channelsRouter,
  calls: callsRouter,
  assistant: assistantRouter,
  privacy: erasureRouter,
  retention: retentionRouter,
});

export type AppRouter = typeof appRouter;
