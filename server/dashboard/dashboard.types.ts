// Inputs and wire shapes of the dashboard-only procedures. The dashboard's forms validate with
// these same schemas before sending, so a field error reads the same on both sides.
import { z } from "zod";
import { SCOPES } from "../auth/principal";
import { pageQuery } from "../api/pagination";

export const ROLES = ["owner", "admin", "member"] as const;

export const issueApiKeyInput = z.strictObject({
  name: z.string().trim().min(1, { message: "give the key a name" }).max(100, { message: "at most 100 characters" }),
  scopes: z.array(z.enum(SCOPES, { message: "unknown scope" })).min(1, { message: "choose at least one scope" }),
});
export type IssueApiKeyInput = z.infer<typeof issueApiKeyInput>;

export const revokeApiKeyInput = z.strictObject({ id: z.uuid({ message: "must be a uuid" }) });

// Not strict: the infinite-query client adds `direction` beside `cursor`.
export const auditLogInput = z.object({ ...pageQuery });

export const inviteMemberInput = z.strictObject({
  email: z.email({ message: "must be an email address" }).max(254),
  role: z.enum(ROLES, { message: "must be owner, admin or member" }),
});
export type InviteMemberInput = z.infer<typeof inviteMemberInput>;

export const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  last4: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKeyWire = z.infer<typeof apiKeySchema>;

export const auditEntrySchema = z.object({
  id: z.string(),
  actor_type: z.string(),
  actor_id: z.string().nullable(),
  actor_label: z.string().nullable(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;
