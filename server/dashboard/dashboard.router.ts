// Dashboard-only procedures (tRPC at /api/trpc; none is part of the REST contract).
import { z } from "zod";
import { getDb } from "../db/client";
import { router } from "../trpc";
import { actorOf } from "../auth/principal";
import { apiKeyToWire, issueApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys";
import { managerProcedure, memberProcedure } from "./procedures";
import { apiKeySchema, auditLogInput, inviteMemberInput, issueApiKeyInput, revokeApiKeyInput } from "./dashboard.types";
import { currentAccount, listAuditLog, listMembers } from "./dashboard.service";
import { inviteMember } from "./invitations";

export const dashboardRouter = router({
  me: memberProcedure.query(async ({ ctx }) => currentAccount(await getDb(), ctx.user)),

  apiKeys: router({
    list: memberProcedure.output(z.array(apiKeySchema)).query(async ({ ctx }) => (await listApiKeys(ctx.db)).map(apiKeyToWire)),
    /** The plaintext is in this response only. */
    issue: managerProcedure.input(issueApiKeyInput).mutation(async ({ ctx, input }) => {
      const { key, plaintext } = await issueApiKey(ctx.db, input, actorOf(ctx.principal));
      return { key: apiKeyToWire(key), plaintext };
    }),
    revoke: managerProcedure
      .input(revokeApiKeyInput)
      .output(apiKeySchema)
      .mutation(async ({ ctx, input }) => apiKeyToWire(await revokeApiKey(ctx.db, input.id, actorOf(ctx.principal)))),
  }),

  auditLog: router({
    list: memberProcedure.input(auditLogInput).query(({ ctx, input }) => listAuditLog(ctx.db, input)),
  }),

  members: router({
    list: memberProcedure.query(async ({ ctx }) => listMembers(await getDb(), ctx.tenantId)),
    invite: managerProcedure
      .input(inviteMemberInput)
      .mutation(({ ctx, input }) => inviteMember(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input)),
  }),
});
