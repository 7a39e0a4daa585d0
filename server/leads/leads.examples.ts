// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import { conversationExample } from "../conversations/conversations.examples";
import type { Lead } from "./leads.types";

export const leadExample: Lead = {
  id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  conversation_id: conversationExample.id,
  status: "new",
  customer_name: "Layla Haddad",
  customer_phone: "+971501234567",
  customer_email: null,
  offering_id: null,
  attributes: { budget_aed: 1600000, bedrooms: 2 },
  notes: null,
  qualified_at: null,
  handoff_requested_at: null,
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

export const qualifiedLeadExample: Lead = { ...leadExample, status: "qualified", qualified_at: EXAMPLE_LATER, updated_at: EXAMPLE_LATER };

export const leadsExamples: OperationExamples = {
  "GET /leads": { query: { limit: 20, stale_for_days: 3 }, response: { data: [qualifiedLeadExample], next_cursor: null, has_more: false } },
  "GET /leads/{id}": { path: { id: qualifiedLeadExample.id }, response: qualifiedLeadExample },
  "POST /leads": {
    body: { conversation_id: conversationExample.id, customer_name: "Layla Haddad", customer_phone: "+971501234567", attributes: leadExample.attributes },
    response: leadExample,
  },
  "PATCH /leads/{id}": { path: { id: leadExample.id }, body: { status: "qualified" }, response: qualifiedLeadExample },
  "POST /leads/{id}/handoff": {
    path: { id: leadExample.id },
    body: { reason: "Wants to negotiate the price with an agent" },
    response: { ...leadExample, handoff_requested_at: EXAMPLE_LATER, updated_at: EXAMPLE_LATER },
  },
};
