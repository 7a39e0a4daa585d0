// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import type { Subscription } from "./webhooks.types";

const endpointExample: Subscription = {
  id: "0b6f4f7e-9c1d-4d7a-8f3e-2a5b6c7d8e91",
  url: "https://hooks.example.com/platform-events",
  description: "CRM sync",
  events: ["lead.created", "booking.created"],
  enabled: true,
  max_deliveries_per_second: 50,
  secret_prefix: "whsec_3f9a1c",
  previous_secret_expires_at: null,
  disabled_reason: null,
  disabled_at: null,
  circuit: "closed",
  failing_since: null,
  last_success_at: null,
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};
const SECRET = "whsec_3f9a1c0d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b";
const ROLLED_SECRET = "whsec_7d2e4b9c1a0f8e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a09";

export const webhookEndpointsExamples: OperationExamples = {
  "GET /webhook-endpoints": { query: { limit: 20 }, response: { data: [endpointExample], next_cursor: null, has_more: false } },
  "GET /webhook-endpoints/{id}": { path: { id: endpointExample.id }, response: { ...endpointExample, pending_deliveries: 0 } },
  "POST /webhook-endpoints": {
    body: { url: endpointExample.url, events: endpointExample.events, description: "CRM sync" },
    response: { ...endpointExample, secret: SECRET },
  },
  "PATCH /webhook-endpoints/{id}": {
    path: { id: endpointExample.id },
    body: { events: ["lead.created", "booking.created", "booking.cancelled"], max_deliveries_per_second: 20 },
    response: {
      ...endpointExample,
      events: ["lead.created", "booking.created", "booking.cancelled"],
      max_deliveries_per_second: 20,
      updated_at: EXAMPLE_LATER,
    },
  },
  "DELETE /webhook-endpoints/{id}": { path: { id: endpointExample.id }, response: { id: endpointExample.id, deleted: true, dropped_pending_deliveries: 0 } },
  "POST /webhook-endpoints/{id}/roll-secret": {
    path: { id: endpointExample.id },
    body: { overlap_seconds: 86_400 },
    response: {
      ...endpointExample,
      secret_prefix: ROLLED_SECRET.slice(0, 12),
      previous_secret_expires_at: "2026-11-22T10:05:00.000Z",
      updated_at: EXAMPLE_LATER,
      secret: ROLLED_SECRET,
    },
  },
};
