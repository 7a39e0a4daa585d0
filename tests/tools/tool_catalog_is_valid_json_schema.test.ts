// The tool catalog (GET /api/agent/v1/tools, MCP tools/list): every tool's input JSON Schema,
// generated from the zod schema that validates its calls, compiles in a JSON Schema 2020-12
// validator, accepts every tool's example call and refuses what the tool refuses.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { CATALOG_FORMATS, strictToolSchemas, toolCatalog, toolCatalogAs } from "../../server/tools/catalog";
import { REGISTERED_TOOLS } from "../../server/tools/tools";
import { newKey, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";

const TOOL_NAMES = [
  "search_offerings",
  "get_conversation_context",
  "upsert_lead",
  "book_appointment",
  "reschedule_appointment",
  "cancel_appointment",
  "request_handoff",
  "record_csat",
];

function validator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

describe("tool catalog", () => {
  it("lists_the_eight_tools_with_descriptions_and_required_scopes", () => {
    const catalog = toolCatalog();
    expect(catalog.map((t) => t.name)).toEqual(TOOL_NAMES);
    expect(catalog.map((t) => t.required_scope)).toEqual([
      "assistant:read",
      "assistant:read",
      "leads:write",
      "appointments:write",
      "appointments:write",
      "appointments:write",
      "leads:write",
      "conversations:write",
    ]);
    for (const tool of catalog) {
      expect(tool.description.length).toBeGreaterThan(60);
      expect(tool.input_schema).toMatchObject({ type: "object", additionalProperties: false });
    }
  });

  it("every_input_schema_compiles_and_accepts_its_example_call", () => {
    const ajv = validator();
    for (const tool of toolCatalog()) {
      const validate = ajv.compile(tool.input_schema);
      const calls = [tool.example];
      if (tool.required_scope !== "assistant:read") calls.push({ ...tool.example, tool_call_id: "call_abc123" });
      for (const example of calls) {
        expect(validate(example), `${tool.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
        // The same call passes the zod schema the tool validates with: the two agree.
        expect(REGISTERED_TOOLS.get(tool.name)!.input.safeParse(example).success).toBe(true);
      }
    }
  });

  it("every_input_schema_refuses_unknown_fields_and_missing_required_ones_like_the_tool_does", () => {
    const ajv = validator();
    for (const tool of toolCatalog()) {
      const validate = ajv.compile(tool.input_schema);
      const zod = REGISTERED_TOOLS.get(tool.name)!.input;
      const unknown = { ...tool.example, not_a_field: 1 };
      expect(validate(unknown)).toBe(false);
      expect(zod.safeParse(unknown).success).toBe(false);
      for (const required of (tool.input_schema.required as string[] | undefined) ?? []) {
        const { [required]: _dropped, ...missing } = tool.example;
        expect(validate(missing), `${tool.name} without ${required}`).toBe(false);
        expect(zod.safeParse(missing).success).toBe(false);
      }
    }
  });

  it("read_tools_take_no_tool_call_id_and_write_tools_bound_it_to_255", () => {
    const ajv = validator();
    for (const tool of toolCatalog()) {
      const validate = ajv.compile(tool.input_schema);
      const isWrite = tool.required_scope !== "assistant:read";
      expect(validate({ ...tool.example, tool_call_id: "x" })).toBe(isWrite);
      expect(validate({ ...tool.example, tool_call_id: "x".repeat(256) })).toBe(false);
    }
  });

  it("every_output_schema_compiles_and_is_an_object_at_the_root_as_mcp_requires", () => {
    const ajv = validator();
    for (const tool of toolCatalog()) {
      expect(() => ajv.compile(tool.output_schema)).not.toThrow();
      expect(tool.output_schema.type).toBe("object");
    }
  });

  it("comes_in_the_forms_llm_apis_and_mcp_take", () => {
    const catalog = toolCatalog();
    const byFormat = Object.fromEntries(CATALOG_FORMATS.map((f) => [f, toolCatalogAs(f)]));
    expect(byFormat.detailed).toEqual(catalog);
    // OpenAI's form is strict: its parameters are the strict form of the input schema (openai_strict_mode_tool_calls.test.ts).
    expect(byFormat.openai).toEqual(
      catalog.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: strictToolSchemas().get(t.name), strict: true },
      })),
    );
    expect(byFormat.anthropic).toEqual(catalog.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })));
    expect(byFormat.mcp).toEqual(
      catalog.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.input_schema, outputSchema: t.output_schema })),
    );
    // Function names as OpenAI and Anthropic allow them.
    for (const t of catalog) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("is_listed_to_a_key_with_assistant_read_in_the_asked_format", async () => {
    const { tenantId } = await tenantWithKey();
    const { key } = await newKey(tenantId, ["assistant:read"]);
    const detailed = await callTool(key, "listTools", {});
    expect(detailed.status).toBe(200);
    expect(detailed.body).toEqual({ data: toolCatalog() });
    const openai = await callTool(key, "listTools", { format: "openai" });
    expect(openai.body).toEqual({ data: toolCatalogAs("openai") });
    const bad = await callTool(key, "listTools", { format: "xml" });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { code: "bad_request", message: "invalid field 'format': must be one of detailed, openai, anthropic, mcp" } });
    const { key: writer } = await newKey(tenantId, ["leads:write"]);
    expect((await callTool(writer, "listTools", {})).status).toBe(403);
  });
});
