// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import { conversationExample } from "../conversations/conversations.examples";
import type { Call } from "./calls.types";

export const callExample: Call = {
  id: "c4a1e2b3-d5f6-4a7b-8c9d-0e1f2a3b4c5d",
  conversation_id: conversationExample.id,
  provider: "retell",
  provider_call_id: "call_8f2b61c0a9e34d7b",
  direction: "inbound",
  status: "completed",
  started_at: EXAMPLE_TIME,
  answered_at: EXAMPLE_TIME,
  ended_at: EXAMPLE_LATER,
  duration_seconds: 300,
  end_reason: "user_hangup",
  recording_url: "https://recordings.example.com/call_8f2b61c0a9e34d7b.wav",
  summary: "Asked about two-bedroom apartments in the Marina; booked a viewing on Tuesday.",
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_LATER,
};

export const callsExamples: OperationExamples = {
  "GET /conversations/{id}/calls": {
    path: { id: conversationExample.id },
    query: { limit: 20 },
    response: { data: [callExample], next_cursor: null, has_more: false },
  },
};
