// Examples for the OpenAPI document (see server/lib/examples.ts).
import type { OperationExamples } from "../lib/examples";

export const crmExamples: OperationExamples = {
  "POST /crm/create-record": {
    body: {
      object: "contacts",
      fields: { first_name: "Layla", last_name: "Haddad", phone: "+971501234567" },
      idempotency_key: "lead-9a8b7c6d-contact",
    },
    response: {
      provider: "http",
      object: "contacts",
      crm_record_id: "rec_20931",
      fields: { firstname: "Layla", lastname: "Haddad", phone: "+971501234567" },
    },
  },
};
