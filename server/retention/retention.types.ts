// The dashboard's retention settings: a tenant's own periods within the operator's bounds.
import { z } from "zod";
import { RETENTION_CLASSES } from "./retention";

const classView = z.object({
  /** The period that applies (null: kept forever). */
  days: z.number().int().nullable(),
  /** The tenant's own period (null: the operator's). */
  tenant_days: z.number().int().nullable(),
  operator_days: z.number().int().nullable(),
  /** The longest period the tenant may set. */
  max_days: z.number().int(),
});
export const retentionSchema = z.object(
  Object.fromEntries(RETENTION_CLASSES.map((c) => [c, classView])) as Record<(typeof RETENTION_CLASSES)[number], typeof classView>,
);

/** Each class: a whole number of days (checked against the bound by retentionUpdate), null for the operator's, or absent (unchanged). */
const days = z.number().int("must be a whole number of days").min(1, "must be at least 1 day").nullable().optional();
export const retentionInput = z.strictObject(
  Object.fromEntries(RETENTION_CLASSES.map((c) => [c, days])) as Record<(typeof RETENTION_CLASSES)[number], typeof days>,
);
