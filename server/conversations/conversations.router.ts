import { router, tenantProcedure } from "../trpc/trpc";
import {
  conversationIdInput,
  conversationListSchema,
  conversationSchema,
  createConversationInput,
  listConversationsInput,
  listMessagesInput,
  messageListSchema,
  messageSchema,
  sendMessageInput,
  updateConversationInput,
} from "./conversations.types";
import { createConversation, getConversation, listConversations, listMessages, sendMessage, updateConversation } from "./conversations.service";

const TAGS = ["Conversations"];

export const conversationsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/conversations",
        tags: TAGS,
        summary: "List conversations",
        description: "Newest first (created_at, then id, descending).",
        protect: true,
      },
    })
    .input(listConversationsInput)
    .output(conversationListSchema)
    .query(({ ctx, input }) => listConversations(ctx.db, input)),

  get: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/conversations/{id}",
        tags: TAGS,
        summary: "Get a conversation",
        description: "Another tenant's conversation answers the same 404 as a missing one.",
        protect: true,
      },
    })
    .input(conversationIdInput)
    .output(conversationSchema)
    .query(({ ctx, input }) => getConversation(ctx.db, input.id)),

  create: tenantProcedure("conversations:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/conversations",
        tags: TAGS,
        summary: "Pre-create a conversation",
        description:
          "Unique per (channel, normalized customer identifier): phone identifiers are normalized to E.164, email addresses lower-cased, others trimmed. A new pair answers 201 and emits `conversation.created`; an existing pair answers 200 with the existing conversation, unchanged, and emits nothing (so retries are safe).",
        protect: true,
      },
      successStatus: 201,
      alsoAnswers: { status: 200, description: "The (channel, customer identifier) pair exists: the existing conversation, unchanged" },
    })
    .input(createConversationInput)
    .output(conversationSchema)
    .mutation(async ({ ctx, input }) => {
      const { conversation, created } = await createConversation(ctx.db, input);
      if (!created) ctx.response.status = 200;
      return conversation;
    }),

  update: tenantProcedure("conversations:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/conversations/{id}",
        tags: TAGS,
        summary: "Update a conversation",
        description:
          "`status` may be set to `open` or `closed`: closing sets `closed_at` and emits `conversation.closed`; reopening clears `closed_at`. `attributes` is shallow-merged (a null value deletes its key).",
        protect: true,
      },
    })
    .input(updateConversationInput)
    .output(conversationSchema)
    .mutation(({ ctx, input }) => updateConversation(ctx.db, input)),

  send: tenantProcedure("conversations:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/conversations/{id}/send",
        tags: TAGS,
        summary: "Send an outbound message",
        description:
          "Stores the message as `queued`, hands it to the configured channel driver, and answers 201 with the message as `sent` or `failed` (emitting `outbound.sent` or `outbound.failed`). A `voice` conversation is a 400 naming `channel`; a `closed` one is a 409, and so is one whose customer is an alphanumeric sender id (`customer_identifier_kind` `as_sent`: it cannot receive messages).",
        protect: true,
        errorResponses: [409],
      },
      successStatus: 201,
    })
    .input(sendMessageInput)
    .output(messageSchema)
    .mutation(({ ctx, input }) => sendMessage(ctx.db, input)),

  messages: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/conversations/{id}/messages",
        tags: TAGS,
        summary: "List a conversation's messages",
        description: "Oldest first (created_at, then id, ascending).",
        protect: true,
      },
    })
    .input(listMessagesInput)
    .output(messageListSchema)
    .query(({ ctx, input }) => listMessages(ctx.db, input)),
});
