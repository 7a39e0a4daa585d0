// Inputs and wire shapes of the dashboard-only procedures. The dashboard's forms validate with
// these same schemas before sending, so a field error reads the same on both sides.
import { z } from "zod";
import { SCOPES } from "../auth/principal";

export const ROLES = ["owner", "admin", "member"] as const;

export const issueApiKeyInput = z.strictObject({
  name: z.string().trim().min(1, { message: "give the key a name" }).max(100, { message: "at most 100 characters" }),
  scopes: z.array(z.enum(SCOPES, { message: "unknown scope" })).min(1, { message: "choose at least one scope" }),
});

export const revokeApiKeyInput = z.strictObject({ id: z.uuid({ message: "must be a uuid" }) });

// Not strict: the infinite-query client adds `direction` beside `cursor`.

export const inviteMemberInput = z.strictObject({
  email: z.email({ message: "enter an email address, like name@company.com" }).max(254, { message: "at most 254 characters" }),
  role: z.enum(ROLES, { message: "must be owner, admin or member" }),
});
export type InviteMemberInput = z.infer<typeof inviteMemberInput>;

const memberId = z.string({ message: "choose a member" }).trim().min(1, { message: "choose a member" }).max(64, { message: "at most 64 characters" });
const invitationId = z
  .string({ message: "choose an invitation" })
  .trim()
  .min(1, { message: "choose an invitation" })
  .max(64, { message: "at most 64 characters" });

export const changeMemberRoleInput = z.strictObject({
  member_id: memberId,
  role: z.enum(ROLES, { message: "must be owner, admin or member" }),
});
export type ChangeMemberRoleInput = z.infer<typeof changeMemberRoleInput>;
export const removeMemberInput = z.strictObject({ member_id: memberId });
export const invitationIdInput = z.strictObject({ invitation_id: invitationId });

/**
 * The secret of an invitation link (server/dashboard/invitation-secret.ts): the only thing that opens
 * the invitation; its id is not enough.
 */
const invitationSecret = z
  .string({ message: "the link has no invitation secret: open the whole link from your invitation" })
  .min(1, { message: "the link has no invitation secret: open the whole link from your invitation" })
  .max(128, { message: "at most 128 characters" })
  .regex(/^[A-Za-z0-9_-]+$/, { message: "the invitation secret is damaged: open the whole link from your invitation" });

/** The accept page: the invitation the link's secret opens. */
export const invitationLookupInput = z.strictObject({ secret: invitationSecret });

/** A signed-in invitee accepts with the link's secret (their account's address must be the invited one). */
export const acceptInvitationInput = z.strictObject({ secret: invitationSecret });

export const acceptWithNewAccountInput = z.strictObject({
  secret: invitationSecret,
  name: z.string({ message: "enter your name" }).trim().min(1, { message: "enter your name" }).max(100, { message: "at most 100 characters" }),
  password: z.string({ message: "choose a password" }).min(8, { message: "use at least 8 characters" }).max(128, { message: "use at most 128 characters" }),
});
export type AcceptWithNewAccountInput = z.infer<typeof acceptWithNewAccountInput>;

export { apiKeySchema } from "../auth/api-keys.types";
