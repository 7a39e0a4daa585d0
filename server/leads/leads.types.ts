import { z } from "zod";
import { PHONE_INPUT_DOC, STORED_PHONE_DOC } from "../lib/phone-docs";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { attributesInput, jsonObject, uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";
import { oneOf } from "../conversations/conversations.types";

const LEAD_STATUSES = ["new", "qualified", "booked", "converted", "lost"] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];
/** 100 years: large enough for any real question, small enough to stay a valid date. */
const MAX_STALE_DAYS = 36_500;

const column = resourceFields<Prisma.LeadGetPayload<object>>();
const patch = { patch: true } as const;

/** The lead, declared once: wire schema, row mapping and patchable columns. */
export const leadResource = column.define("Lead", {
  id: column.value("id", z.uuid()),
  conversation_id: column.value("conversationId", z.uuid(), patch),
  status: column.value("status", z.enum(LEAD_STATUSES).describe("Created as `new`; any move is allowed except back to `new`"), patch),
  customer_name: column.value("customerName", z.string().nullable(), patch),
  customer_phone: column.value("customerPhone", z.string().nullable().describe(STORED_PHONE_DOC), patch),
  customer_email: column.value("customerEmail", z.string().nullable(), patch),
  offering_id: column.value("offeringId", z.uuid().nullable(), patch),
  attributes: column.json("attributes", jsonObject()),
  notes: column.value("notes", z.string().nullable(), patch),
  qualified_at: column.timestamp("qualifiedAt", z.string().nullable().describe("ISO 8601 date-time the lead left `new`")),
  handoff_requested_at: column.timestamp("handoffRequestedAt", z.string().nullable().describe("ISO 8601 date-time of the latest handoff request")),
  created_at: column.timestamp("createdAt", z.string().describe("ISO 8601 date-time")),
  updated_at: column.timestamp("updatedAt", z.string().describe("ISO 8601 date-time")),
});
export const leadSchema = leadResource.schema;

const fields = {
  customer_name: z.string().trim().max(200).nullable(),
  customer_phone: z.string().trim().max(40).nullable().describe(`${PHONE_INPUT_DOC}; blank is none (null)`),
  customer_email: z.email({ message: "must be an email address" }).max(320).nullable(),
  offering_id: uuid().nullable().describe("An offering of this tenant (404 otherwise)"),
  attributes: attributesInput().describe(
    "Shallow-merged on update: keys overwrite or add, a null value deletes the key; the merged object is at most 16 KiB as JSON",
  ),
  notes: z.string().max(10000).nullable(),
};

export const createLeadInput = z.strictObject(
  {
    conversation_id: uuid().describe("A conversation of this tenant (404 otherwise)"),
    ...(Object.fromEntries(Object.entries(fields).map(([k, s]) => [k, s.optional()])) as {
      [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
    }),
  },
  unknownFieldMessage(),
);

const NOT_UPDATABLE = new Set(["conversation_id", "qualified_at", "handoff_requested_at", "created_at", "updated_at"]);
const updatable = {
  ...fields,
  status: oneOf(LEAD_STATUSES).describe("Leaving `new` sets `qualified_at` and emits `lead.qualified`; moving back to `new` is a 409"),
};

export const updateLeadInput = z
  .strictObject(
    {
      id: uuid().describe("Lead id"),
      ...(Object.fromEntries(Object.entries(updatable).map(([k, s]) => [k, s.optional()])) as {
        [K in keyof typeof updatable]: z.ZodOptional<(typeof updatable)[K]>;
      }),
    },
    unknownFieldMessage(NOT_UPDATABLE),
  )
  .refine((body) => Object.keys(updatable).some((k) => k in body), {
    message: "request body must contain at least one updatable field",
  });

export const handoffLeadInput = z.strictObject(
  {
    id: uuid().describe("Lead id"),
    reason: z.string().max(1000).optional().describe("Why a human should take over (carried in the event)"),
  },
  unknownFieldMessage(),
);

const staleDaysMessage = `must be an integer from 1 to ${MAX_STALE_DAYS}`;
export const leadIdInput = z.object({ id: uuid().describe("Lead id") });

export const listLeadsInput = z.object({
  ...pageQuery,
  stale_for_days: z
    .number({ error: staleDaysMessage })
    .int({ message: staleDaysMessage })
    .min(1, { message: staleDaysMessage })
    .max(MAX_STALE_DAYS, { message: staleDaysMessage })
    .optional()
    .describe("Only `qualified` leads whose conversation has had no message (or, without messages, was created) for more than this many days"),
});

export const leadListSchema = listEnvelope(leadSchema, "LeadList");

export type Lead = z.infer<typeof leadSchema>;
export type CreateLeadInput = z.infer<typeof createLeadInput>;
export type UpdateLeadInput = z.infer<typeof updateLeadInput>;
export type HandoffLeadInput = z.infer<typeof handoffLeadInput>;
