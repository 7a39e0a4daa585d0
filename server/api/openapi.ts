// The OpenAPI 3.1 document, generated once per process from the same zod schemas that validate
// requests (trpc-to-openapi), then completed with what the generator does not know: the real
// error envelope on every operation, 201 for creates, and the rate-limit headers.
import { forEachOpenApiProcedure, generateOpenApiDocument, normalizePath, type OpenAPIObject } from "trpc-to-openapi";
import { appRouter } from "../router";
import { EVENTS_MARKDOWN } from "../events/catalog";
import type { ProcedureMeta } from "../trpc";

const ERROR_CODES = ["unauthorized", "forbidden", "rate_limited", "bad_request", "not_found", "conflict", "internal_error"];

const DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: validation failed (the message names the field), malformed JSON, a non-object body or a wrong content type",
  401: "Missing or malformed Authorization header, or an unknown or revoked API key",
  403: "The API key lacks the scope this operation needs",
  404: "Not found: the resource does not exist or is not visible to this key's tenant (the same body in both cases)",
  409: "Conflict with the resource's current state",
  413: "Request body larger than 1 MiB (code `bad_request`)",
  429: "Rate limited (per key or per tenant); the headers describe the refusing layer",
  500: "Internal error; the message is generic and the request id identifies it in the logs",
};

const intHeader = (description: string) => ({ description, schema: { type: "integer" } });
const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": intHeader("Requests allowed per window by the reported layer"),
  "X-RateLimit-Remaining": intHeader("Requests left in the current window"),
  "X-RateLimit-Reset": intHeader("Unix time (seconds) when the window resets"),
};
const REQUEST_ID_HEADER = { "x-request-id": { description: "Request id (echoed when the request sent a valid one)", schema: { type: "string" } } };

const API_DESCRIPTION = `Tenant data API of the AI receptionist platform.

Every request needs \`Authorization: Bearer <API key>\` (\`xapk_live_\` + 48 hex characters). A key sees only its own tenant: another tenant's row answers exactly like a missing one.

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
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key: `xapk_live_` followed by 48 hex characters" } },
  });
  doc.components ??= {};
  doc.components.schemas = {
    ...doc.components.schemas,
    ErrorEnvelope: {
      type: "object",
      required: ["error"],
      additionalProperties: false,
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          additionalProperties: false,
          properties: { code: { type: "string", enum: ERROR_CODES }, message: { type: "string" } },
        },
      },
    },
  };

  forEachOpenApiProcedure(appRouter._def.procedures as any, ({ meta }: { meta: ProcedureMeta }) => {
    const { method, path, errorResponses } = meta.openapi!;
    const operation = doc.paths?.[normalizePath(path)]?.[method.toLowerCase() as "get"];
    if (!operation?.responses) return;
    const success = operation.responses["200"];
    const successStatus = String(meta.successStatus ?? 200);
    const statuses = new Set<number>([400, 401, 403, 429, 500]);
    if (path.includes("{") || method === "POST") statuses.add(404);
    if (method !== "GET") statuses.add(413);
    for (const s of Array.isArray(errorResponses) ? errorResponses : Object.keys(errorResponses ?? {}).map(Number)) statuses.add(s);

    operation.responses = {
      [successStatus]: {
        ...success,
        description: successStatus === "201" ? "Created" : (success?.description ?? "OK"),
        headers: { ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER },
      },
    };
    for (const status of [...statuses].sort()) {
      operation.responses[String(status)] = {
        description: DESCRIPTIONS[status] ?? "Error",
        headers:
          status === 429
            ? { "Retry-After": intHeader("Seconds until the refusing layer resets"), ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER }
            : REQUEST_ID_HEADER,
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      };
    }
  });
  return doc;
}
