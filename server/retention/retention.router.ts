// The dashboard's retention settings (no openapi meta: never on /api/v1). Every member reads them;
// only an owner changes them (audited), and never past the operator's bounds (400 naming the class).
import { database } from "../db/database";
import { actorOf } from "../auth/principal";
import { AppError, badRequest } from "../lib/errors";
import { setTenantRetention } from "../tenants/lifecycle";
import { memberProcedure } from "../trpc/procedures";
import { router } from "../trpc/trpc";
import { retentionUpdate, retentionView } from "./retention";
import { retentionInput, retentionSchema } from "./retention.types";

async function viewOf(tenantId: string) {
  const tenant = await database().prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  return retentionView(tenant);
}

export const retentionRouter = router({
  get: memberProcedure.output(retentionSchema).query(({ ctx }) => viewOf(ctx.tenantId)),
  update: memberProcedure
    .input(retentionInput)
    .output(retentionSchema)
    .mutation(async ({ ctx, input }) => {
      if (ctx.user.role !== "owner") throw new AppError("forbidden", `role '${ctx.user.role}' cannot change retention; an owner can`);
      const update = retentionUpdate(input);
      if ("field" in update) throw badRequest(`invalid field '${update.field}': ${update.message}`, update.field);
      if (Object.keys(update.data).length) await setTenantRetention(ctx.tenantId, update.data, input, actorOf(ctx.principal));
      return viewOf(ctx.tenantId);
    }),
});
