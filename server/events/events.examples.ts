// Examples for the OpenAPI document (see server/shared/examples.ts).
import type { OperationExamples } from "../shared/examples";
import { exampleEnvelope } from "./examples";

export const eventsExamples: OperationExamples = {
  "GET /events": {
    query: { limit: 20, type: "booking.created" },
    response: { data: [exampleEnvelope("booking.created")], next_cursor: null, has_more: false },
  },
};
