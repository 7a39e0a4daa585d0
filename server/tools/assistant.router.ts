// The dashboard's "Assistant" page (no openapi meta: never on /api/v1). Members read the handoff
// SLA and the list of tools; owners and admins change the SLA (audited, see setHandoffSla).
import { z } from "zod";
import { router } from "../trpc/trpc";
import { actorOf } from "../auth/principal";
import { managerProcedure, memberProcedure } from "../trpc/procedures";
import { getHandoffSla, handoffSlaInput, handoffSlaSchema, setHandoffSla } from "../conversations/sla-monitor";
import { REGISTERED_TOOLS } from "./tools";

const toolSummarySchema = z.object({ name: z.string(), title: z.string(), kind: z.enum(["read", "write"]), required_scope: z.string() });

export const assistantRouter = router({
  handoffSla: memberProcedure.output(handoffSlaSchema).query(({ ctx }) => getHandoffSla(ctx.tenantId)),
  setHandoffSla: managerProcedure
    .input(handoffSlaInput)
    .output(handoffSlaSchema)
    .mutation(({ ctx, input }) => setHandoffSla(ctx.tenantId, input, actorOf(ctx.principal))),
  /** The tools an assistant can call, for the page's list (the catalog endpoint has their schemas). */
  tools: memberProcedure
    .output(z.array(toolSummarySchema))
    .query(() => [...REGISTERED_TOOLS.values()].map(({ tool, scope }) => ({ name: tool.name, title: tool.title, kind: tool.kind, required_scope: scope }))),
});
