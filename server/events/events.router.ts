import { router, tenantProcedure } from "../trpc/trpc";
import { EVENTS_RETENTION_DAYS, eventListSchema, listEventsInput } from "./events.types";
import { listEvents } from "./events.service";

export const eventsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/events",
        tags: ["Events"],
        summary: "List events",
        description: `The tenant's events, newest first (created_at, then id), each exactly the envelope its webhooks carry, so a consumer can reconcile deliveries it missed: deduplicate on \`id\` as for webhooks. Filter by \`type\` and by a \`created_gte\`/\`created_lt\` range. Events of the last ${EVENTS_RETENTION_DAYS} days are listed; older ones are not.`,
        protect: true,
      },
    })
    .input(listEventsInput)
    .output(eventListSchema)
    .query(({ ctx, input }) => listEvents(ctx.db, input)),
});
