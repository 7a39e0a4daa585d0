// Examples for the OpenAPI document (see server/lib/examples.ts).
import type { OperationExamples } from "../lib/examples";
import { exampleEnvelope } from "./examples";

export const eventsExamples: OperationExamples = {
  "GET /events": {
    query: { limit: 20, type: "booking.created" },
    response: { data: [exampleEnvelope("booking.created")], next_cursor: null, has_more: false },
  },
};
