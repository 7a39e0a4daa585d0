// The tool catalog: every tool's name, description and input JSON Schema, generated from its zod
// schema, in the forms LLM tool calling takes (OpenAI-style `{ type: "function", function }`,
// Anthropic-style `{ name, description, input_schema }`) and the MCP `tools/list` form. The OpenAI
// form is strict (`"strict": true`, its parameters in the subset strict mode takes: strict-schema.ts).
import { z } from "zod";
import type { Scope } from "../auth/principal";
import { REGISTERED_TOOLS, type RegisteredTool } from "./tools";
import { strictInputSchema } from "./strict-schema";

type JsonSchema = Record<string, unknown>;

export type ToolCatalogEntry = {
  name: string;
  title: string;
  description: string;
  /** `assistant:read` is also granted by `read` */
  required_scope: Scope;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  example: Record<string, unknown>;
};

/**
 * JSON Schema (2020-12) of a zod schema as a caller sends it (`input`) or receives it (`output`).
 * A schema with an id (Lead, Appointment, …) comes out as a bare `$ref` into `$defs`; its definition
 * is put at the root, because tool schemas must be objects at the root (MCP requires `type: "object"`).
 */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" }) as JsonSchema;
  const ref = typeof rest.$ref === "string" && /^#\/\$defs\/(.+)$/.exec(rest.$ref);
  if (!ref) return rest;
  const defs = rest.$defs as Record<string, JsonSchema>;
  return { ...defs[ref[1]], $defs: defs };
}

function entryOf({ tool, input, scope }: RegisteredTool): ToolCatalogEntry {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    required_scope: scope,
    input_schema: jsonSchemaOf(input, "input"),
    output_schema: jsonSchemaOf(tool.output, "output"),
    example: tool.example,
  };
}

let catalog: ToolCatalogEntry[] | undefined;

/** Every tool, generated once per process. */
export function toolCatalog(): ToolCatalogEntry[] {
  catalog ??= [...REGISTERED_TOOLS.values()].map(entryOf);
  return catalog;
}

let strictSchemas: Map<string, JsonSchema> | undefined;

/** Each tool's input schema in OpenAI's strict form, by tool name (generated once per process). */
export function strictToolSchemas(): ReadonlyMap<string, JsonSchema> {
  strictSchemas ??= new Map(toolCatalog().map((t) => [t.name, strictInputSchema(t.input_schema)]));
  return strictSchemas;
}

export const CATALOG_FORMATS = ["detailed", "openai", "anthropic", "mcp"] as const;
export type CatalogFormat = (typeof CATALOG_FORMATS)[number];

/** The catalog in one of the forms LLM APIs and MCP take, each item ready to pass as it is. */
export function toolCatalogAs(format: CatalogFormat): Record<string, unknown>[] {
  const tools = toolCatalog();
  switch (format) {
    case "openai":
      return tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: strictToolSchemas().get(t.name), strict: true },
      }));
    case "anthropic":
      return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
    case "mcp":
      return tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.input_schema, outputSchema: t.output_schema }));
    default:
      return tools;
  }
}
