// Examples for the OpenAPI document (see server/lib/examples.ts).
import type { OperationExamples } from "../lib/examples";
import type { ErasedRecords, ErasureResult } from "./erasure.types";

export const erasedRecordsExample: ErasedRecords = {
  conversation_ids: ["5d3b2c1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d"],
  message_ids: ["0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b"],
  call_ids: [],
  lead_ids: ["7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"],
  appointment_ids: [],
  csat_response_ids: [],
};

const erasedExample: ErasureResult = {
  status: "erased",
  event_id: "evt_2b1c0d9e-8f7a-4b6c-9d5e-4f3a2b1c0d9e",
  ...erasedRecordsExample,
  redacted: { events: 3, deliveries: 6, notifications: 0, audit_entries: 0, tool_calls: 1, idempotent_responses: 0 },
};

export const erasureExamples: OperationExamples = {
  "POST /privacy/erasures": { body: { conversation_id: erasedRecordsExample.conversation_ids[0] }, response: erasedExample },
};
