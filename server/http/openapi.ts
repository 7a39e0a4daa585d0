// The OpenAPI 3.1 document, generated once per process from the same zod schemas that validate
// requests (trpc-to-openapi), then completed with what the generator does not know: the real
// error envelope on every operation, 201 for creates, the rate-limit headers, the bearer scheme as
// the document's default, each operation's examples, and the events as OpenAPI 3.1 `webhooks`.
import { generateOpenApiDocument, normalizePath, type OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";
import { createSchema } from "zod-openapi";
import { appRouter } from "./router";
import { EVENT_PAYLOADS, EVENT_TYPES, EVENTS_MARKDOWN, eventEnvelopeSchema, FIRES_WHEN } from "../events/catalog";
import { exampleEnvelope } from "../events/examples";
import { forEachOpenApiProcedureOf } from "../trpc/internals";
import { analyticsExamples } from "../analytics/analytics.examples";
import { appointmentsExamples } from "../appointments/appointments.examples";
import { callsExamples } from "../calls/calls.examples";
import { conversationsExamples } from "../conversations/conversations.examples";
import { crmExamples } from "../crm/crm.examples";
import { eventsExamples } from "../events/events.examples";
import { leadsExamples } from "../leads/leads.examples";
import { offeringsExamples } from "../offerings/offerings.examples";
import { webhookEndpointsExamples } from "../webhooks/webhook-endpoints.examples";
import { erasureExamples } from "../erasure/erasure.examples";
import type { OperationExamples } from "../lib/examples";
import { BEARER_SCHEME, completeDocument, declareScope } from "./openapi-common";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_RETENTION_MS, IDEMPOTENT_REPLAYED_HEADER, MAX_IDEMPOTENCY_KEY } from "../idempotency/idempotency";

/** Every operation's examples, keyed `METHOD /path`. */
export const OPERATION_EXAMPLES: OperationExamples = {
  ...offeringsExamples,
  ...appointmentsExamples,
  ...conversationsExamples,
  ...leadsExamples,
  ...analyticsExamples,
  ...crmExamples,
  ...eventsExamples,
  ...callsExamples,
  ...webhookEndpointsExamples,
  ...erasureExamples,
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  Offerings: "The tenant's catalog: what the assistant offers and quotes.",
  Conversations: "One per (channel, customer): its messages, calls and sends.",
  Leads: "Prospects qualified in conversations, and handoffs to a human.",
  Appointments: "Bookings, as the assistant or an integrator makes them.",
  Analytics: "The tenant's daily counts, rolled up.",
  CRM: "A proxy to the tenant's connected CRM.",
  Events: "Every change as an event: the feed to reconcile with, and the webhooks that carry it.",
  "Webhook endpoints": "Where the events are sent: register, change, roll the signing secret of and delete the tenant's endpoints (scope `webhooks:write`).",
  Privacy: "Customers' data rights: erasing one customer (scope `privacy:write`, which only a tenant owner can grant).",
};

const DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: validation failed (the message names the field), malformed JSON, a non-object body or a wrong content type",
  401: "Missing or malformed Authorization header, or an unknown or revoked API key",
  403: "The API key lacks the scope this operation needs",
  404: "Not found: the resource does not exist or is not visible to this key's tenant (the same body in both cases)",
  409: "Conflict with the resource's current state",
  503: "The database is unreachable or busy; retry after `Retry-After` seconds (code `internal_error`)",
  413: "Request body larger than 1 MiB (code `bad_request`)",
  429: "Rate limited (per key or per tenant, or too many failed authentications from one address); the headers describe the refusing layer",
  500: "Internal error; the message is generic and the request id identifies it in the logs",
};

const intHeader = (description: string) => ({ description, schema: { type: "integer" } });
const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": intHeader("Requests allowed per window by the reported layer"),
  "X-RateLimit-Remaining": intHeader("Requests left in the current window"),
  "X-RateLimit-Reset": intHeader("Unix time (seconds) when the window resets"),
};
const REQUEST_ID_HEADER = { "x-request-id": { description: "Request id (echoed when the request sent a valid one)", schema: { type: "string" } } };

const IDEMPOTENCY_HOURS = IDEMPOTENCY_KEY_RETENTION_MS / 3_600_000;
/** Every POST's optional header (server/idempotency/). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: "header",
  required: false,
  description: `Makes a retry safe: the first answer (2xx) to a key is stored for ${IDEMPOTENCY_HOURS} hours, and a repeat with the same key and the same body answers it again, byte for byte, with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`, changing nothing. Another body (or endpoint) with the key, or a repeat while the first is still running, is a 409. Error answers are not stored: their retry runs again. Keys are per API key; 1 to ${MAX_IDEMPOTENCY_KEY} printable ASCII characters (a UUID is a good choice), else 400.`,
  schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY, pattern: "^[\\x20-\\x7E]+$" },
  example: "5f0c8a8e-2b7d-4a39-9d61-0b4f7f3c2a11",
};
const REPLAYED_HEADER = {
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description: `\`true\` when this is the stored answer to an earlier request with the same ${IDEMPOTENCY_KEY_HEADER}`,
    schema: { type: "string", enum: ["true"] },
  },
};
const IDEMPOTENCY_CONFLICT = `${DESCRIPTIONS[409]}; or the ${IDEMPOTENCY_KEY_HEADER} was already used with another body or endpoint, or its first request is still running (with \`Retry-After\`)`;

const API_DESCRIPTION = `Tenant data API of the AI receptionist platform.

Every request needs \`Authorization: Bearer <API key>\` (\`xapk_live_\` + 48 hex characters); each operation's \`x-required-scopes\` names the scopes that let a key call it (without one: 403). A key sees only its own tenant: another tenant's row answers exactly like a missing one.

Errors always have the body \`{"error": {"code": "...", "message": "..."}}\`. Lists are keyset-paginated: pass \`next_cursor\` back as \`cursor\`; \`limit\` is 1 to 100 (default 20, larger values are capped).`;

let cached: OpenAPIObject | undefined;

export function getOpenApiDocument(): OpenAPIObject {
  cached ??= buildDocument();
  return cached;
}

function buildDocument(): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: "Tenant Data API",
    version: "0.1.0",
    description: `${API_DESCRIPTION}\n\n${EVENTS_MARKDOWN}`,
    baseUrl: "/api/v1",
    securitySchemes: BEARER_SCHEME,
  });
  completeDocument(doc, TAG_DESCRIPTIONS);

  forEachOpenApiProcedureOf(appRouter, ({ meta }) => {
    const { method, path, errorResponses } = meta.openapi;
    const operation = doc.paths?.[normalizePath(path)]?.[method.toLowerCase() as "get"];
    if (!operation?.responses) return;
    if (meta.scope) declareScope(operation, meta.scope, meta.alsoScopes);
    const success = operation.responses["200"];
    const successStatus = String(meta.successStatus ?? 200);
    const statuses = new Set<number>([400, 401, 403, 429, 500, 503]);
    if (path.includes("{") || method === "POST") statuses.add(404);
    if (method !== "GET" && method !== "DELETE") statuses.add(413); // a DELETE's body is never read
    if (method === "POST") {
      statuses.add(409);
      operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER as never];
    }
    const successHeaders =
      method === "POST" ? { ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER, ...REPLAYED_HEADER } : { ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
    for (const s of Array.isArray(errorResponses) ? errorResponses : Object.keys(errorResponses ?? {}).map(Number)) statuses.add(s);

    operation.responses = {
      [successStatus]: {
        ...success,
        description: successStatus === "201" ? "Created" : (success?.description ?? "OK"),
        headers: successHeaders,
      },
    };
    if (meta.alsoAnswers) {
      operation.responses[String(meta.alsoAnswers.status)] = {
        ...success,
        description: meta.alsoAnswers.description,
        headers: successHeaders,
      };
    }
    for (const status of [...statuses].sort()) {
      operation.responses[String(status)] = {
        description: status === 409 && method === "POST" ? IDEMPOTENCY_CONFLICT : (DESCRIPTIONS[status] ?? "Error"),
        headers:
          status === 429
            ? { "Retry-After": intHeader("Seconds until the refusing layer resets"), ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER }
            : status === 503
              ? { "Retry-After": intHeader("Seconds after which to try again"), ...REQUEST_ID_HEADER }
              : status === 409 && method === "POST"
                ? {
                    "Retry-After": intHeader(`Only while the ${IDEMPOTENCY_KEY_HEADER}'s first request is still running: seconds after which to retry`),
                    ...REQUEST_ID_HEADER,
                  }
                : REQUEST_ID_HEADER,
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      };
    }
    addExamples(operation, OPERATION_EXAMPLES[`${method} ${normalizePath(path)}`]);
  });
  addWebhooks(doc);
  return doc;
}

type Operation = NonNullable<NonNullable<OpenAPIObject["paths"]>[string]["get"]>;

function addExamples(operation: Operation, example: OperationExamples[string] | undefined) {
  if (!example) return;
  for (const parameter of (operation.parameters ?? []) as { name: string; in: string; example?: unknown }[]) {
    const value = parameter.in === "path" ? example.path?.[parameter.name] : example.query?.[parameter.name];
    if (value !== undefined) parameter.example = value;
  }
  const body = (operation.requestBody as { content?: Record<string, { example?: unknown }> } | undefined)?.content?.["application/json"];
  if (body && example.body) body.example = example.body;
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const media = (response as { content?: Record<string, { example?: unknown }> }).content?.["application/json"];
    if (status.startsWith("2") && media) media.example = example.response;
  }
}

/** The 19 events as OpenAPI 3.1 `webhooks`: what each subscription receives, with its payload schema and an example. */
function addWebhooks(doc: OpenAPIObject) {
  const webhooks: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const envelope = eventEnvelopeSchema.extend({ event: z.literal(type), data: EVENT_PAYLOADS[type] }).meta({ id: `Event_${type.replace(".", "_")}` });
    const { schema, components } = createSchema(envelope, { io: "output", openapiVersion: "3.1.0" });
    doc.components!.schemas = { ...components, ...doc.components!.schemas };
    webhooks[type] = {
      post: {
        operationId: `event_${type.replace(".", "_")}`,
        summary: type,
        description: `Sent when ${FIRES_WHEN[type]}. Signed as described in the API description (\`x-webhook-signature\`, Standard Webhooks headers); answer 2xx to acknowledge.`,
        tags: ["Events"],
        security: [],
        requestBody: { required: true, content: { "application/json": { schema, example: exampleEnvelope(type) } } },
        responses: { "200": { description: "Any 2xx acknowledges the delivery; 4xx is a permanent failure; 5xx, a timeout or a network error is retried" } },
      },
    };
  }
  Object.assign(doc, { webhooks });
}
