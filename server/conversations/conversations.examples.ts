// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import type { Conversation, Message } from "./conversations.types";

export const conversationExample: Conversation = {
  id: "5d3b2c1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d",
  channel: "whatsapp",
  customer_identifier: "+971501234567",
  customer_identifier_kind: "normalized",
  customer_name: "Layla Haddad",
  status: "open",
  summary: null,
  attributes: { language: "ar" },
  last_message_at: null,
  message_count: 0,
  closed_at: null,
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

export const messageExample: Message = {
  id: "0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b",
  conversation_id: conversationExample.id,
  direction: "outbound",
  author: "operator",
  body: "Hello Layla, your viewing is confirmed for Tuesday at 1 pm.",
  status: "queued",
  created_at: EXAMPLE_LATER,
};

export const conversationsExamples: OperationExamples = {
  "GET /conversations": { query: { limit: 20 }, response: { data: [conversationExample], next_cursor: null, has_more: false } },
  "POST /conversations": {
    body: { channel: "whatsapp", customer_identifier: "+971 50 123 4567", customer_name: "Layla Haddad", attributes: { language: "ar" } },
    response: conversationExample,
  },
  "GET /conversations/{id}": { path: { id: conversationExample.id }, response: conversationExample },
  "PATCH /conversations/{id}": {
    path: { id: conversationExample.id },
    body: { summary: "Asked about two-bedroom apartments in the Marina." },
    response: { ...conversationExample, summary: "Asked about two-bedroom apartments in the Marina.", updated_at: EXAMPLE_LATER },
  },
  "POST /conversations/{id}/send": { path: { id: conversationExample.id }, body: { body: messageExample.body }, response: messageExample },
  "GET /conversations/{id}/messages": {
    path: { id: conversationExample.id },
    query: { limit: 50 },
    response: { data: [{ ...messageExample, status: "sent" }], next_cursor: null, has_more: false },
  },
};
