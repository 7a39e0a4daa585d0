// The agent tools as tRPC procedures: `agent.<tool>` for each tool and `agent.listTools` for the
// catalog. Built on tenantProcedure (API key; the per-(tenant, tool), per-key and per-tenant limits
// in one check; scope; bounded input). This router is NOT part of the app router: the app router is
// served as /api/v1 (every procedure with `openapi` meta becomes a REST route there) and to the
// dashboard at /api/trpc, and the tools belong to neither. It is served on its own, at
// /api/agent/v1 (its `openapi` meta gives the routes of that second table) and over MCP.
import { z } from "zod";
import { router, tenantProcedure } from "../trpc/trpc";
import { REGISTERED_TOOLS, type RegisteredTool } from "./tools";
import { withToolCall } from "./tool-calls";
import { CATALOG_FORMATS, toolCatalog, toolCatalogAs } from "./catalog";
import { countToolCall, metricsEnabled } from "../observability/metrics";
import { strictArgumentsReader } from "./strict-schema";

export const AGENT_API_BASE_PATH = "/api/agent/v1";
const TAGS = ["Agent tools"];

const inputSchemaOf = (name: string) => toolCatalog().find((t) => t.name === name)!.input_schema;

function toolProcedure({ tool, input, scope }: RegisteredTool) {
  // Made at the first call (the catalog is built lazily).
  let strictArguments: ((args: unknown) => unknown) | undefined;
  const fromStrict = (args: unknown) => (strictArguments ??= strictArgumentsReader(inputSchemaOf(tool.name)))(args);
  const retries = tool.kind === "write" ? " Accepts `tool_call_id`: a repeat of the same id answers the first call's result and changes nothing." : "";
  return (
    tenantProcedure(scope, { tool: tool.name, confirmsKey: tool.confirmsCallerKey })
      .meta({
        openapi: {
          method: "POST",
          path: `/tools/${tool.name}`,
          tags: TAGS,
          summary: tool.title,
          protect: true,
          description: `${tool.description}\n\nScope: \`${scope}\`${scope === "assistant:read" ? " (or `read`)" : ""}.${retries}`,
        },
      })
      // Counted by outcome; and arguments shaped by the strict schema (`format=openai`) become the
      // tool's own input before it is validated: a null optional argument is absent, `{ key, value }`
      // pairs are the map's object. One middleware for both: each step of the chain costs a call.
      .use(({ getRawInput, next }) => {
        const result = next({ getRawInput: async () => fromStrict(await getRawInput()) });
        // With metrics off nothing is counted: the result goes on without a wrapper of its own.
        return metricsEnabled() ? countToolCall(tool.name, result) : result;
      })
      .input(input)
      .output(tool.output)
      .mutation(({ ctx, input: { tool_call_id, ...args } }) => {
        const toolCallId = tool_call_id as string | undefined;
        const context = { db: ctx.db, sql: ctx.sql, tenantId: ctx.tenantId, keyToConfirm: ctx.keyToConfirm };
        if (tool.recordsItsCall) return tool.run({ ...context, toolCallId }, args);
        return withToolCall(ctx.db, ctx.tenantId, tool.name, toolCallId, (db) => tool.run({ ...context, db }, args));
      })
  );
}

const listToolsInput = z.strictObject({
  format: z
    .enum(CATALOG_FORMATS, { error: `must be one of ${CATALOG_FORMATS.join(", ")}` })
    .optional()
    .describe(
      '`detailed` (default): name, title, description, required_scope, input_schema, output_schema, example; `openai`: `{ type: "function", function: { name, description, parameters, strict: true } }`, its parameters in the form OpenAI\'s strict mode takes (every field required, optional ones nullable, maps as `{ key, value }` pairs); `anthropic`: `{ name, description, input_schema }`; `mcp`: `{ name, title, description, inputSchema, outputSchema }`',
    ),
});

const listTools = tenantProcedure("assistant:read")
  .meta({
    openapi: {
      method: "GET",
      path: "/tools",
      tags: TAGS,
      summary: "List the tools",
      protect: true,
      description:
        "Every tool with its description and input JSON Schema (2020-12, generated from the same schemas that validate calls), in the form your LLM API takes. Scope: `assistant:read` (or `read`).",
    },
  })
  .input(listToolsInput)
  .output(z.object({ data: z.array(z.record(z.string(), z.unknown())).describe("One entry per tool, in the requested format") }))
  .query(({ input }) => ({ data: toolCatalogAs(input.format ?? "detailed") }));

export const agentRouter = router({
  listTools,
  ...Object.fromEntries([...REGISTERED_TOOLS.values()].map((registered) => [registered.tool.name, toolProcedure(registered)])),
});
