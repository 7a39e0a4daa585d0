// Dashboard-only procedures (tRPC at /api/trpc; none is part of the REST contract).
import { z } from "zod";
import { getDb } from "../db/client";
import { publicProcedure, router } from "../trpc/trpc";
import { actorOf, MANAGER_ROLES } from "../auth/principal";
import { apiKeyToWire, issueApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys";
import { managerProcedure, memberProcedure } from "../trpc/procedures";
import {
  acceptWithNewAccountInput,
  apiKeySchema,
  changeMemberRoleInput,
  invitationIdInput,
  invitationLookupInput,
  inviteMemberInput,
  issueApiKeyInput,
  removeMemberInput,
  revokeApiKeyInput,
} from "./dashboard.types";
import { currentAccount, listMembers } from "./dashboard.service";
import { auditLogRouter } from "./audit-log.router";
import { acceptWithNewAccount, describeInvitation, invitationLink, inviteMember, resendInvitation, revokeInvitation } from "./invitations";
import { changeMemberRole, removeMember } from "./members";
import { trustedOriginsFor } from "./request-origin";

/** The dashboard's own origin, for invitation links: BETTER_AUTH_URL's, else the one the request was sent to. */
const dashboardOrigin = (headers: Headers) => trustedOriginsFor(headers)[0] ?? "";

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

  auditLog: auditLogRouter,

  members: router({
    list: memberProcedure.query(async ({ ctx }) =>
      listMembers(await getDb(), ctx.tenantId, MANAGER_ROLES.includes(ctx.user.role) ? (id) => invitationLink(dashboardOrigin(ctx.headers), id) : null),
    ),
    invite: managerProcedure
      .input(inviteMemberInput)
      .mutation(({ ctx, input }) => inviteMember(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input, dashboardOrigin(ctx.headers))),
    resendInvitation: managerProcedure
      .input(invitationIdInput)
      .mutation(({ ctx, input }) =>
        resendInvitation(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input.invitation_id, dashboardOrigin(ctx.headers)),
      ),
    revokeInvitation: managerProcedure
      .input(invitationIdInput)
      .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input.invitation_id)),
    changeRole: managerProcedure
      .input(changeMemberRoleInput)
      .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input)),
    remove: managerProcedure
      .input(removeMemberInput)
      .mutation(({ ctx, input }) => removeMember(ctx.db, ctx.tenantId, ctx.user, actorOf(ctx.principal), input.member_id)),
  }),

  /** The accept page, opened from an invitation link by someone who may not have an account yet. */
  invitation: router({
    describe: publicProcedure.input(invitationLookupInput).query(({ input }) => describeInvitation(input.id)),
    acceptWithNewAccount: publicProcedure.input(acceptWithNewAccountInput).mutation(({ input }) => acceptWithNewAccount(input)),
  }),
});
