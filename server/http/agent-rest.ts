// The tools over plain HTTP: POST /api/agent/v1/tools/{tool} and GET /api/agent/v1/tools, served by
// the same REST bridge as /api/v1 (same keys, envelope, strict bodies, body limit, bounded input),
// over the agent router; and their OpenAPI document at /api/agent/v1/openapi.json.
import { generateOpenApiDocument, normalizePath, type OpenAPIObject } from "trpc-to-openapi";
import { BEARER_SCHEME, completeDocument, declareScope } from "./openapi-common";
import { createRestBridge } from "./rest-bridge";
import { answerFromNodeWith } from "./node-rest";
import { AGENT_API_BASE_PATH, agentRouter } from "../tools/tools.router";
import { forEachOpenApiProcedureOf } from "../trpc/internals";

const ERROR_STATUSES: Record<string, string> = {
  "400": "Invalid input; the message names the field",
  "401": "Missing, malformed, unknown or revoked API key",
  "403": "The key lacks the tool's scope",
  "404": "An id that is not the tenant's (exactly like a missing one), or no such tool",
  "409": "The change breaks a rule (e.g. a cancelled appointment cannot be moved)",
  "413": "Body over 1 MiB",
  "429": "A rate limit layer refused: per (tenant, tool) 50/min, per key, per tenant; see Retry-After",
  "500": "Internal error",
  "503": "Database unreachable; retry after Retry-After",
};

const DESCRIPTION = `The assistant's tools, each a thin adapter over the same domain services as \`/api/v1\`, emitting the same events.

Same bearer API keys and error envelope \`{"error": {"code", "message"}}\` as \`/api/v1\`. Read tools need \`assistant:read\` (or \`read\`); write tools the write scope of the matching \`/api/v1\` operation. Limits: per (tenant, tool) 50 calls a minute, on top of per key and per tenant; answers carry the tool layer's \`X-RateLimit-*\`. Write tools accept \`tool_call_id\` (at most 255 characters): a repeat for the same tenant and tool answers the first call's result and changes nothing more. \`GET /tools\` lists every tool with its input JSON Schema for LLM tool calling; the same tools are served over MCP (streamable HTTP) at \`/api/agent/mcp\`.`;

let document: OpenAPIObject | undefined;

/** The OpenAPI 3.1 document of the tool endpoints (built once). */
function getAgentOpenApiDocument(): OpenAPIObject {
  if (document) return document;
  const doc = generateOpenApiDocument(agentRouter, {
    title: "Agent tools API",
    version: "0.1.0",
    description: DESCRIPTION,
    baseUrl: AGENT_API_BASE_PATH,
    securitySchemes: BEARER_SCHEME,
  });
  completeDocument(doc, { "Agent tools": "The assistant's tools: reads and writes over the same services as /api/v1, with the same events." });
  forEachOpenApiProcedureOf(agentRouter, ({ meta }) => {
    const operation = doc.paths?.[normalizePath(meta.openapi.path)]?.[meta.openapi.method.toLowerCase() as "get"];
    if (operation && meta.scope) declareScope(operation, meta.scope);
  });
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of [item.get, item.post]) {
      if (!operation?.responses) continue;
      const errors = Object.entries(ERROR_STATUSES).filter(([status]) => operation === item.post || !["404", "409", "413"].includes(status));
      operation.responses = {
        "200": operation.responses["200"],
        ...Object.fromEntries(
          errors.map(([status, description]) => [
            status,
            { description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } },
          ]),
        ),
      };
    }
  }
  document = doc;
  return doc;
}

const bridge = createRestBridge({ basePath: AGENT_API_BASE_PATH, router: agentRouter, documents: { "/openapi.json": getAgentOpenApiDocument } });

/** Answers one /api/agent/v1 request (transport-neutral, like answerRestRequest). */
export const answerAgentRequest = bridge.answer;
/** The same as a Fetch handler (the app-router route file mounts it). */
export const handleAgentRequest = bridge.handle;

/** Answers one /api/agent/v1 request straight from node:http (the lean front). */
export const answerAgentFromNode = answerFromNodeWith(answerAgentRequest);
