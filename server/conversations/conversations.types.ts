import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { attributesInput, invalid, jsonObject, uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";
import { CHANNELS, CUSTOMER_IDENTIFIER_KINDS } from "../lib/conversation-channels";

const CONVERSATION_STATUSES = ["open", "handoff", "closed"] as const;
const MESSAGE_DIRECTIONS = ["inbound", "outbound"] as const;
const MESSAGE_AUTHORS = ["customer", "assistant", "operator"] as const;
const MESSAGE_STATUSES = ["received", "queued", "sent", "delivered", "failed"] as const;
const MAX_MESSAGE_BODY = 4096;

/** An enum whose error lists the allowed values (also when the field is missing). */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, invalid(`must be one of ${values.join(", ")}`));

const conversationColumn = resourceFields<Prisma.ConversationGetPayload<object>>();
const messageColumn = resourceFields<Prisma.MessageGetPayload<object>>();
const patch = { patch: true } as const;

/** The conversation, declared once: wire schema, row mapping and patchable columns. */
export const conversationResource = conversationColumn.define("Conversation", {
  id: conversationColumn.value("id", z.uuid()),
  channel: conversationColumn.value("channel", z.enum(CHANNELS)),
  customer_identifier: conversationColumn.value(
    "customerIdentifier",
    z
      .string()
      .describe(
        "Normalized: E.164 for voice/sms/whatsapp, lower-case for email, trimmed otherwise; a sender a provider verified that is no phone number (a short code, an alphanumeric sender id) is kept as the provider sent it (`customer_identifier_kind` `as_sent`)",
      ),
  ),
  customer_identifier_kind: conversationColumn.value(
    "customerIdentifierKind",
    z
      .enum(CUSTOMER_IDENTIFIER_KINDS)
      .describe(
        "`normalized` (as above), or `as_sent`: an inbound message or call on voice/sms/whatsapp from a sender that is no phone number, stored as the provider sent it (a reply to an alphanumeric sender is refused)",
      ),
  ),
  customer_name: conversationColumn.value("customerName", z.string().nullable(), patch),
  status: conversationColumn.value("status", z.enum(CONVERSATION_STATUSES).describe("`open`, `handoff` (set by a lead handoff) or `closed`")),
  summary: conversationColumn.value("summary", z.string().nullable(), patch),
  attributes: conversationColumn.json("attributes", jsonObject()),
  last_message_at: conversationColumn.timestamp(
    "lastMessageAt",
    z.string().nullable().describe("ISO 8601 date-time of the latest message; null before the first"),
  ),
  message_count: conversationColumn.value("messageCount", z.number().int()),
  closed_at: conversationColumn.timestamp(
    "closedAt",
    z.string().nullable().describe("ISO 8601 date-time the conversation was closed; null while it is not closed"),
  ),
  created_at: conversationColumn.timestamp("createdAt", z.string().describe("ISO 8601 date-time")),
  updated_at: conversationColumn.timestamp("updatedAt", z.string().describe("ISO 8601 date-time")),
});
export const conversationSchema = conversationResource.schema;

/** A message, declared once: wire schema and row mapping. */
export const messageResource = messageColumn.define("Message", {
  id: messageColumn.value("id", z.uuid()),
  conversation_id: messageColumn.value("conversationId", z.uuid()),
  direction: messageColumn.value("direction", z.enum(MESSAGE_DIRECTIONS)),
  author: messageColumn.value("author", z.enum(MESSAGE_AUTHORS)),
  body: messageColumn.value("body", z.string()),
  status: messageColumn.value(
    "status",
    z
      .enum(MESSAGE_STATUSES)
      .describe(
        "Inbound messages are `received`; outbound ones go `queued`, then `sent` or `failed`, and `sent` becomes `delivered` (or `failed`) when the provider reports it",
      ),
  ),
  created_at: messageColumn.timestamp("createdAt", z.string().describe("ISO 8601 date-time")),
});
export const messageSchema = messageResource.schema;

/** Fields a client may not set: they are derived, or fixed by the natural key. */
const NOT_UPDATABLE = new Set([
  "channel",
  "customer_identifier",
  "customer_identifier_kind",
  "last_message_at",
  "message_count",
  "closed_at",
  "created_at",
  "updated_at",
]);

const customerName = z.string().trim().max(200).nullable();
const summary = z.string().max(10000).nullable();

export const createConversationInput = z.strictObject(
  {
    channel: oneOf(CHANNELS),
    customer_identifier: z
      .string()
      .max(320)
      .describe("Phone number (voice, sms, whatsapp; E.164 such as +971501234567), email address (email) or the channel's own id (webchat)"),
    customer_name: customerName.optional(),
    summary: summary.optional(),
    attributes: attributesInput().optional().describe("A JSON object of at most 16 KiB"),
  },
  unknownFieldMessage(),
);

const updatable = {
  status: oneOf(["open", "closed"]).describe("`closed` sets `closed_at` and emits `conversation.closed`; `open` reopens and clears `closed_at`"),
  customer_name: customerName,
  summary,
  attributes: attributesInput().describe("Shallow-merged: keys overwrite or add, a null value deletes the key; the merged object is at most 16 KiB as JSON"),
};

export const updateConversationInput = z
  .strictObject(
    {
      id: uuid().describe("Conversation id"),
      ...(Object.fromEntries(Object.entries(updatable).map(([k, s]) => [k, s.optional()])) as {
        [K in keyof typeof updatable]: z.ZodOptional<(typeof updatable)[K]>;
      }),
    },
    unknownFieldMessage(NOT_UPDATABLE),
  )
  .refine((body) => Object.keys(updatable).some((k) => k in body), {
    message: "request body must contain at least one updatable field",
  });

export const sendMessageInput = z.strictObject(
  {
    id: uuid().describe("Conversation id"),
    body: z
      .string()
      .min(1)
      .max(MAX_MESSAGE_BODY)
      .refine((s) => s.trim().length > 0, { message: "must not be blank" })
      .describe("Message text, 1 to 4096 characters"),
  },
  unknownFieldMessage(),
);

export const conversationIdInput = z.object({ id: uuid().describe("Conversation id") });
export const listConversationsInput = z.object(pageQuery);
export const listMessagesInput = z.object({ id: uuid().describe("Conversation id"), ...pageQuery });

export const conversationListSchema = listEnvelope(conversationSchema, "ConversationList");
export const messageListSchema = listEnvelope(messageSchema, "MessageList");

export type Conversation = z.infer<typeof conversationSchema>;
export type Message = z.infer<typeof messageSchema>;
export type CreateConversationInput = z.infer<typeof createConversationInput>;
export type UpdateConversationInput = z.infer<typeof updateConversationInput>;
export type SendMessageInput = z.infer<typeof sendMessageInput>;
