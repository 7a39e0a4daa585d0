// The events the conversations domain emits (the API, intake, sending and the SLA monitor), and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { z } from "zod";
import { objectChanged, objectOnly } from "../outbox/event-payloads";
import { conversationSchema, messageSchema } from "./conversations.types";

export const CONVERSATION_EVENTS = {
  "conversation.created": objectOnly(conversationSchema),
  "conversation.closed": objectChanged(conversationSchema),
  "outbound.sent": z.strictObject({
    object: messageSchema,
    conversation: conversationSchema,
    driver: z.string().describe("Channel driver that sent the message"),
    provider_message_id: z.string().nullable(),
  }),
  "outbound.failed": z.strictObject({
    object: messageSchema,
    conversation: conversationSchema,
    driver: z.string(),
    error: z.string().describe("Why the channel refused or failed the message"),
  }),
  "sla.breached": z.strictObject({
    object: conversationSchema.describe("The conversation in `handoff`"),
    waited_seconds: z.number().int().nonnegative().describe("How long the customer has waited since the handoff began, without an operator message"),
    sla_minutes: z.number().int().positive().describe("The tenant's `handoff_sla_minutes` the wait exceeded"),
  }),
} as const;
