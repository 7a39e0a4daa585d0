// The tools over the Model Context Protocol (streamable HTTP, stateless, JSON responses) at
// /api/agent/mcp. Same keys and limits as /api/agent/v1: the HTTP request is authenticated with the
// bearer API key first (401, and the per-IP limit of failed authentication), its body read under
// the same 1 MiB limit and bounds; then `tools/call` runs the agent router's own procedures, so
// scopes, the per-key, per-tenant and per-tool limits, validation, tool_call_id and tenant isolation
// are exactly the REST endpoint's. A refused or failed call is a tool result with `isError` (what
// the model should read), carrying the same error envelope.
//
// Every other message counts too, against the key's and the tenant's buckets (a batch counts each
// message; see countMessages): past the limit the whole HTTP request is the 429 envelope with the
// refusing layer's headers, before anything runs. A tool call is left to its procedure, which
// counts it once with its tool layer.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AppError, badRequest, errorBody, toAppError } from "../lib/errors";
import { type RequestLog, requestIdOf, withRequestLogger } from "../lib/log";
import { resolveClientIp } from "../lib/client-ip";
import { assertBoundedInput } from "../lib/bounded-input";
import { assertJsonContentType, readLimitedBody } from "../lib/request-body";
import { forbiddenFor, type Principal } from "../auth/principal";
import { limitMcpMessages } from "../ratelimit";
import { authenticate, createCallerFactory, type RequestContext } from "../trpc/trpc";
import { agentRouter } from "../tools/tools.router";
import { REGISTERED_TOOLS } from "../tools/tools";
import { toolCatalogAs } from "../tools/catalog";
import { traceRequest } from "../observability/tracing";

export const AGENT_MCP_PATH = "/api/agent/mcp";
const SERVER_INFO = { name: "tenant-data-platform-tools", version: "0.1.0" };

type Procedures = Record<string, (input: unknown) => Promise<unknown>>;
const createCaller = createCallerFactory(agentRouter);

const toolError = (error: AppError): CallToolResult => ({ isError: true, content: [{ type: "text", text: JSON.stringify(errorBody(error)) }] });

/**
 * An MCP server for one HTTP request, whose handlers call the agent procedures with that request's
 * context. `toolCalls.reached` counts the tool calls that reached their procedure (and so were counted).
 */
function mcpServerFor(ctx: RequestContext, principal: Principal, toolCalls: { reached: number }): Server {
  const procedures = createCaller(ctx) as unknown as Procedures;
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
  // The catalog with GET /tools' scope, not through its procedure: the request has counted it already.
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const forbidden = forbiddenFor(principal, "assistant:read");
    if (forbidden) throw new McpError(ErrorCode.InvalidRequest, forbidden.message);
    return { tools: toolCatalogAs("mcp") as Tool[] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    if (!REGISTERED_TOOLS.has(name)) throw new McpError(ErrorCode.InvalidParams, `no tool '${name}'`);
    toolCalls.reached++;
    try {
      const result = (await procedures[name](args)) as Record<string, unknown>;
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      const error = toAppError(err);
      if (error.errorCode === "internal_error") ctx.logger.error({ tool: name, error: error.cause ?? err }, "tool call failed");
      return toolError(error);
    }
  });
  return server;
}

function envelope(error: AppError, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(error.headers ?? {})) headers[name.toLowerCase()] = value;
  return Response.json(errorBody(error), { status: error.status, headers });
}

/** The JSON-RPC message of the request, read under the API's body limit and input bounds. */
async function readMessage(req: Request): Promise<unknown> {
  assertJsonContentType(req.headers.get("content-type"));
  const text = await readLimitedBody(req.headers.get("content-length"), req.body);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw badRequest("request body is not valid JSON");
  }
  assertBoundedInput(message);
  return message;
}

/**
 * A message whose tool procedure counts it (with its tool layer): a `tools/call` request the SDK
 * will hand to our handler (the same schema it checks) naming a tool we have. Any other message,
 * including a malformed `tools/call`, is counted by the request.
 */
function isCountedByItsTool(message: unknown): boolean {
  if (!isJSONRPCRequest(message) || message.method !== "tools/call") return false;
  const parsed = CallToolRequestSchema.safeParse(message);
  return parsed.success && REGISTERED_TOOLS.has(parsed.data.params.name);
}

/**
 * Counts `messages` against the key's and the tenant's buckets (none: nothing to count) and sets
 * the decision's headers; past the limit, the refusing layer's 429.
 */
async function countMessages(principal: Principal, messages: number, headers: Record<string, string>): Promise<void> {
  if (messages === 0 || principal.kind !== "api_key") return;
  const decision = await limitMcpMessages({ keyId: principal.keyId, tenantId: principal.tenantId, messages });
  for (const [name, value] of Object.entries(decision.headers)) headers[name.toLowerCase()] = value;
  if (!decision.allowed) throw new AppError("rate_limited", decision.message, { headers: decision.headers });
}

/** Answers one MCP request (POST; GET and DELETE are 405: this server keeps no sessions or streams). */
export async function handleMcpRequest(req: Request): Promise<Response> {
  const requestId = requestIdOf(req.headers);
  // Every line logged while it runs carries its request id (server/lib/log.ts); with tracing on, the request is a span.
  return traceRequest(
    { method: req.method, target: req.url, headers: req.headers },
    AGENT_MCP_PATH,
    requestId,
    () => withRequestLogger(requestId, (logger) => answerMcp(req, requestId, logger)),
    (answer) => ({ status: answer.status, route: AGENT_MCP_PATH }),
  );
}

async function answerMcp(req: Request, requestId: string, logger: RequestLog): Promise<Response> {
  const headers: Record<string, string> = { "x-request-id": requestId };
  const resHeaders = { set: (name: string, value: string) => void (headers[name.toLowerCase()] = value) };
  const clientIp = resolveClientIp({ remoteAddress: null, forwardedFor: req.headers.get("x-forwarded-for") });
  const ctx: RequestContext = { transport: "rest", headers: req.headers, clientIp: () => clientIp, requestId, logger, resHeaders, response: {} };
  try {
    const principal = await authenticate(ctx);
    if (req.method !== "POST") {
      await countMessages(principal, 1, headers);
      return Response.json(
        {
          jsonrpc: "2.0",
          error: { code: ErrorCode.ConnectionClosed, message: "Method not allowed: this MCP server is stateless; POST JSON-RPC messages" },
          id: null,
        },
        { status: 405, headers: { ...headers, allow: "POST" } },
      );
    }
    // Limited before a bad body is answered, as /api/v1 is: an unreadable body counts as one message.
    const message = await readMessage(req).catch(async (err) => {
      await countMessages(principal, 1, headers);
      throw err;
    });
    const messages = Array.isArray(message) ? message : [message];
    const toolCalls = messages.filter(isCountedByItsTool).length;
    // An empty batch, which the transport refuses, still counts as one.
    await countMessages(principal, Math.max(messages.length, 1) - toolCalls, headers);
    const reached = { reached: 0 };
    const server = mcpServerFor(ctx, principal, reached);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(req, { parsedBody: message });
      const body = await answer.text();
      // Tool calls the transport refused before their procedure (a wrong Accept header, a message
      // that is not JSON-RPC) were counted by nothing yet: they count now, and past the limit the
      // answer is the 429 all the same.
      await countMessages(principal, toolCalls - reached.reached, headers);
      const merged = { ...Object.fromEntries(answer.headers), ...headers };
      return new Response(body || null, { status: answer.status, headers: merged });
    } finally {
      await server.close();
    }
  } catch (err) {
    const error = toAppError(err);
    if (error.errorCode === "internal_error") logger.error({ error: error.cause ?? err }, "MCP request failed");
    return envelope(error, headers);
  }
}
