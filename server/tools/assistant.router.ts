// The dashboard's "Assistant" settings (no openapi meta: never on /api/v1). Members read the
// handoff SLA; owners and admins change it (audited, see setHandoffSla).
import { router } from "../trpc";
import { actorOf } from "../auth/principal";
import { managerProcedure, memberProcedure } from "../dashboard/procedures";
import { getHandoffSla, handoffSlaInput, handoffSlaSchema, setHandoffSla } from "../conversations/sla-monitor";

export const assistantRouter = router({
  handoffSla: memberProcedure.output(handoffSlaSchema).query(({ ctx }) => getHandoffSla(ctx.tenantId)),
  setHandoffSla: managerProcedure
    .input(handoffSlaInput)
    .output(handoffSlaSchema)
    .mutation(({ ctx, input }) => setHandoffSla(ctx.tenantId, input, actorOf(ctx.principal))),
});
