// The events the leads domain emits, and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { z } from "zod";
import { objectChanged, objectOnly, previousAttributes } from "../outbox/event-payloads";
import { conversationSchema, messageSchema } from "../conversations/conversations.types";
import { leadSchema } from "./leads.types";

export const LEAD_EVENTS = {
  "lead.created": objectOnly(leadSchema),
  "lead.updated": objectChanged(leadSchema),
  "lead.qualified": z.strictObject({
    object: leadSchema,
    previous_attributes: previousAttributes,
    messages: z.array(messageSchema).max(10).describe("The conversation's last 10 messages, oldest first"),
  }),
  "conversation.handoff_requested": z.strictObject({
    object: conversationSchema,
    previous_attributes: previousAttributes,
    lead: leadSchema.describe("The lead whose handoff was requested"),
    reason: z.string().nullable(),
  }),
} as const;
