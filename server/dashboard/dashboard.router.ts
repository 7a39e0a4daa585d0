// Dashboard-only procedures (tRPC at /api/trpc; none is part of the REST contract).
import { z } from "zod";
import { database } from "../db/database";
import { publicProcedure, router } from "../trpc/trpc";
import { actorOf, forbiddenToGrant } from "../auth/principal";
import { apiKeyToWire, issueApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys";
import { managerProcedure, memberProcedure } from "../trpc/procedures";
import {
  acceptInvitationInput,
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
import { acceptAsSignedInUser, acceptWithNewAccount, describeInvitation, inviteMember, resendInvitation, revokeInvitation } from "./invitations";
import { makeActiveTenant, resolveSignedInUser } from "./identity";
import { AppError } from "../lib/errors";
import { changeMemberRole, removeMember } from "./members";
import { trustedOriginsFor } from "./request-origin";

/** The dashboard's own origin, for invitation links: BETTER_AUTH_URL's, else the one the request was sent to. */
const dashboardOrigin = (headers: Headers) => trustedOriginsFor(headers)[0] ?? "";

export const dashboardRouter = router({
  me: memberProcedure.query(async ({ ctx }) => currentAccount(database().prisma, ctx.user)),

  apiKeys: router({
    list: memberProcedure.output(z.array(apiKeySchema)).query(async ({ ctx }) => (await listApiKeys(ctx.db)).map(apiKeyToWire)),
    /** The plaintext is in this response only. */
    issue: managerProcedure.input(issueApiKeyInput).mutation(async ({ ctx, input }) => {
      const refusal = forbiddenToGrant(ctx.user.role, input.scopes);
      if (refusal) throw refusal;
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
    /** Pending invitations by id, never with their links: a link is shown once, by the invite or resend that made it. */
    list: memberProcedure.query(async ({ ctx }) => listMembers(database().prisma, ctx.tenantId)),
    invite: managerProcedure
      .input(inviteMemberInput)
      .mutation(({ ctx, input }) => inviteMember(ctx.db, ctx.user, actorOf(ctx.principal), input, dashboardOrigin(ctx.headers))),
    resendInvitation: managerProcedure
      .input(invitationIdInput)
      .mutation(({ ctx, input }) => resendInvitation(ctx.db, ctx.user, actorOf(ctx.principal), input.invitation_id, dashboardOrigin(ctx.headers))),
    revokeInvitation: managerProcedure
      .input(invitationIdInput)
      .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.user, actorOf(ctx.principal), input.invitation_id)),
    changeRole: managerProcedure.input(changeMemberRoleInput).mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.user, actorOf(ctx.principal), input)),
    remove: managerProcedure.input(removeMemberInput).mutation(({ ctx, input }) => removeMember(ctx.db, ctx.user, actorOf(ctx.principal), input.member_id)),
  }),

  /**
   * The accept page, opened from an invitation link by someone who may not have an account yet. Each
   * takes the link's secret, in a POST body (describe too, though it changes nothing): a secret never
   * travels in a URL, where access logs and proxies would keep it.
   */
  invitation: router({
    describe: publicProcedure.input(invitationLookupInput).mutation(({ input }) => describeInvitation(input.secret)),
    acceptWithNewAccount: publicProcedure.input(acceptWithNewAccountInput).mutation(({ input }) => acceptWithNewAccount(input)),
    /** A signed-in invitee (of any tenant, or none yet) joins; the tenant becomes the session's active one. */
    accept: publicProcedure.input(acceptInvitationInput).mutation(async ({ ctx, input }) => {
      const user = ctx.transport === "trpc" ? await resolveSignedInUser(ctx.headers) : null;
      if (!user) throw new AppError("unauthorized", "sign in to accept this invitation");
      const joined = await acceptAsSignedInUser({ id: user.userId, email: user.email }, input.secret);
      await makeActiveTenant(user.sessionToken, joined.tenant_id);
      return joined;
    }),
  }),
});
