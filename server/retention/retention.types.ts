// The dashboard's retention settings: a tenant's own periods within the operator's bounds.
// Declared here, not in retention.ts, so the dashboard page can import them without server code.
import { z } from "zod";

/** The classes of data with a retention period. */
export const RETENTION_CLASSES = ["messages", "call_recordings", "events", "audit_log", "notifications"] as const;
export type RetentionClass = (typeof RETENTION_CLASSES)[number];

const classView = z.object({
  /** The period that applies (null: kept forever). */
  days: z.number().int().nullable(),
  /** The tenant's own period (null: the operator's). */
  tenant_days: z.number().int().nullable(),
  operator_days: z.number().int().nullable(),
  /** The longest period the tenant may set. */
  max_days: z.number().int(),
});
export const retentionSchema = z.object(Object.fromEntries(RETENTION_CLASSES.map((c) => [c, classView])) as Record<RetentionClass, typeof classView>);

/** Each class: a whole number of days (checked against the bound by retentionUpdate), null for the operator's, or absent (unchanged). */
const days = z.number().int("must be a whole number of days").min(1, "must be at least 1 day").nullable().optional();
export const retentionInput = z.strictObject(Object.fromEntries(RETENTION_CLASSES.map((c) => [c, days])) as Record<RetentionClass, typeof days>);
