// Inputs of the dashboard's audit log (list and CSV export). Free of Node imports: the page
// validates its filter form with these same schemas.
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { pageQuery } from "../lib/list-envelope";

/** Most rows one CSV export holds (newest first); the answer says when more matched. */
export const AUDIT_CSV_MAX_ROWS = 10_000;

const day = z
  .string()
  .regex(/^\d{4}-\d\d-\d\d$/, { message: "must be a date like 2026-11-23" })
  .refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)), { message: "must be a real calendar date" });

const auditFilterFields = {
  actor: z
    .string()
    .trim()
    .max(200, { message: "at most 200 characters" })
    .optional()
    .describe("Part of the actor's label (an email, `cli`, a key name) or the exact actor id"),
  action: z
    .string()
    .trim()
    .max(100, { message: "at most 100 characters" })
    .optional()
    .describe("An exact action (`api_key.issued`) or a prefix ending in a dot (`webhook_subscription.`)"),
  from: day.optional().describe("First day included (UTC), YYYY-MM-DD"),
  to: day.optional().describe("Last day included (UTC), YYYY-MM-DD"),
};

const fromNotAfterTo = (f: { from?: string; to?: string }) => !f.from || !f.to || f.from <= f.to;
const rangeMessage = { message: "must not be before the 'from' date", path: ["to"] };

// Not strict: the infinite-query client adds `direction` beside `cursor`.
export const auditLogListInput = z.object({ ...pageQuery, ...auditFilterFields }).refine(fromNotAfterTo, rangeMessage);
export const auditLogExportInput = z.strictObject(auditFilterFields).refine(fromNotAfterTo, rangeMessage);
export type AuditFilter = z.infer<typeof auditLogExportInput>;

export const auditCsvSchema = z.object({
  filename: z.string(),
  csv: z.string(),
  rows: z.number().int(),
  truncated: z.boolean().describe(`true when more than ${AUDIT_CSV_MAX_ROWS} entries matched (the newest are exported)`),
});

/** One audit entry as the dashboard reads it. */
const column = resourceFields<Prisma.AuditLogGetPayload<object>>();
export const auditEntryResource = column.define(null, {
  id: column.value("id", z.string()),
  actor_type: column.value("actorType", z.string()),
  actor_id: column.value("actorId", z.string().nullable()),
  actor_label: column.value("actorLabel", z.string().nullable()),
  action: column.value("action", z.string()),
  target_type: column.value("targetType", z.string()),
  target_id: column.value("targetId", z.string().nullable()),
  details: column.json("details", z.record(z.string(), z.unknown())),
  created_at: column.timestamp("createdAt", z.string()),
});
