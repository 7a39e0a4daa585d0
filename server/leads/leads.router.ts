import { router, tenantProcedure } from "../trpc/trpc";
import { createLeadInput, handoffLeadInput, leadIdInput, leadListSchema, leadSchema, listLeadsInput, updateLeadInput } from "./leads.types";
import { createLead, getLead, listLeads, requestLeadHandoff, updateLead } from "./leads.service";

const TAGS = ["Leads"];

export const leadsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/leads",
        tags: TAGS,
        summary: "List leads",
        description:
          "Newest first (created_at, then id, descending). `stale_for_days=N` keeps only `qualified` leads whose conversation has been quiet (no message, or no message since its creation) for more than N days. There is no status filter.",
        protect: true,
      },
    })
    .input(listLeadsInput)
    .output(leadListSchema)
    .query(({ ctx, input }) => listLeads(ctx.db, input)),

  get: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/leads/{id}",
        tags: TAGS,
        summary: "Get a lead",
        description: "Another tenant's lead answers the same 404 as a missing one.",
        protect: true,
      },
    })
    .input(leadIdInput)
    .output(leadSchema)
    .query(({ ctx, input }) => getLead(ctx.db, input.id)),

  create: tenantProcedure("leads:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/leads",
        tags: TAGS,
        summary: "Create a lead",
        description: "Created as `new`. `conversation_id` (required) and `offering_id` must belong to the tenant (404 otherwise). Emits `lead.created`.",
        protect: true,
      },
      successStatus: 201,
    })
    .input(createLeadInput)
    .output(leadSchema)
    .mutation(({ ctx, input }) => createLead(ctx.db, input)),

  update: tenantProcedure("leads:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/leads/{id}",
        tags: TAGS,
        summary: "Update a lead",
        description:
          "Any status move is allowed except back to `new` (409). Leaving `new` sets `qualified_at` and emits `lead.qualified` (with the conversation's last 10 messages). `attributes` is shallow-merged (a null value deletes its key). A change emits `lead.updated`.",
        protect: true,
        errorResponses: [409],
      },
    })
    .input(updateLeadInput)
    .output(leadSchema)
    .mutation(({ ctx, input }) => updateLead(ctx.db, input)),

  handoff: tenantProcedure("leads:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/leads/{id}/handoff",
        tags: TAGS,
        summary: "Hand the lead's conversation to a human",
        description:
          "Sets `handoff_requested_at`, moves the conversation to `handoff` and emits `conversation.handoff_requested`. The body may be `{}`. Repeating it while the conversation is in handoff changes nothing. A closed conversation is a 409.",
        protect: true,
        errorResponses: [409],
      },
    })
    .input(handoffLeadInput)
    .output(leadSchema)
    .mutation(({ ctx, input }) => requestLeadHandoff(ctx.db, input)),
});
