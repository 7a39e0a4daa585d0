// `GET /api/agent/v1/tools?format=openai` is what OpenAI's strict mode (strict function calling,
// structured outputs) accepts, checked here against the rules OpenAI documents for it (written out
// below as a checker), and the server takes what those schemas describe: every optional argument
// sent as null (a strict model sends every key) is treated as absent, and a map (`attributes`) sent
// as `{ key, value }` pairs acts like the object, over the agent REST endpoint and over MCP, both on
// real HTTP through the lean front.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeanServer } from "../../server/http/lean-server";
import { toolCatalog, toolCatalogAs } from "../../server/tools/catalog";
import { call, tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

type Schema = Record<string, any>;

// --- OpenAI's documented rules for strict mode ("Structured Outputs: supported schemas") ---------
/** String formats strict mode supports. */
const STRICT_FORMATS = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
/** Keywords any schema may carry, and those each type adds; everything else is refused. */
const ANY_TYPE = ["type", "description", "enum", "const", "anyOf", "$ref"];
const BY_TYPE: Record<string, string[]> = {
  string: ["pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  boolean: [],
  null: [],
  array: ["items", "minItems", "maxItems"],
  object: ["properties", "required", "additionalProperties"],
};
const MAX_NESTING = 10;
const MAX_PROPERTIES = 5000;
const MAX_ENUM_VALUES = 1000;

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** What strict mode would refuse in `root` (empty: nothing). */
function strictModeViolations(root: Schema): string[] {
  const problems: string[] = [];
  let properties = 0;
  if (root.type !== "object") problems.push("#: the root must be an object");
  if ("anyOf" in root) problems.push("#: the root must not be anyOf");
  const visit = (s: unknown, at: string, nesting: number) => {
    if (!isSchema(s)) {
      problems.push(`${at}: not a schema`);
      return;
    }
    const types: string[] = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
    if (types.length === 0 && !["anyOf", "$ref", "enum", "const"].some((k) => k in s)) problems.push(`${at}: says nothing of its type`);
    for (const t of types) if (!(t in BY_TYPE)) problems.push(`${at}: type '${t}' not supported`);
    const allowed = new Set([...ANY_TYPE, ...(at === "#" ? ["$defs"] : []), ...types.flatMap((t) => BY_TYPE[t] ?? [])]);
    for (const k of Object.keys(s)) if (!allowed.has(k)) problems.push(`${at}: keyword '${k}' not supported${types.length ? ` on ${types.join("|")}` : ""}`);
    if (typeof s.format === "string" && !STRICT_FORMATS.includes(s.format)) problems.push(`${at}: format '${s.format}' not supported`);
    if (Array.isArray(s.enum) && s.enum.length > MAX_ENUM_VALUES) problems.push(`${at}: more than ${MAX_ENUM_VALUES} enum values`);
    if (nesting > MAX_NESTING) problems.push(`${at}: nested deeper than ${MAX_NESTING}`);
    if (types.includes("object") || "properties" in s) {
      if (s.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`);
      if (!isSchema(s.properties)) problems.push(`${at}: an object must list its properties`);
      const names = Object.keys(s.properties ?? {});
      properties += names.length;
      const required: string[] = Array.isArray(s.required) ? s.required : [];
      const notRequired = names.filter((n) => !required.includes(n));
      if (notRequired.length > 0) problems.push(`${at}: every property must be required (not: ${notRequired.join(", ")})`);
      for (const [name, p] of Object.entries(s.properties ?? {})) visit(p, `${at}/properties/${name}`, nesting + 1);
    }
    if ("items" in s) visit(s.items, `${at}/items`, nesting + 1);
    if (Array.isArray(s.anyOf)) for (const [i, b] of s.anyOf.entries()) visit(b, `${at}/anyOf/${i}`, nesting);
    if (at === "#" && isSchema(s.$defs)) for (const [name, d] of Object.entries(s.$defs)) visit(d, `#/$defs/${name}`, nesting);
  };
  visit(root, "#", 1);
  if (properties > MAX_PROPERTIES) problems.push(`#: more than ${MAX_PROPERTIES} properties in all`);
  return problems;
}

const admitsNull = (s: Schema): boolean => s.type === "null" || (Array.isArray(s.type) && s.type.includes("null")) || (s.anyOf ?? []).some(admitsNull);

// --------------------------------------------------------------------------------------------------

type OpenAiTool = { type: string; function: { name: string; description: string; parameters: Schema; strict: boolean } };
const openAiTools = () => toolCatalogAs("openai") as OpenAiTool[];
const strictSchemaOf = (tool: string) => openAiTools().find((t) => t.function.name === tool)!.function.parameters;
const optionalArguments = (tool: string) => {
  const input = toolCatalog().find((t) => t.name === tool)!.input_schema;
  return Object.keys(input.properties as object).filter((k) => !((input.required as string[] | undefined) ?? []).includes(k));
};
const pairs = (o: Record<string, unknown>) => Object.entries(o).map(([key, value]) => ({ key, value }));

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
/** Fails unless `args` is what the tool's strict schema describes (what a strict model can send). */
function assertStrictShaped(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  const id = `strict:${tool}`;
  if (!ajv.getSchema(id)) ajv.addSchema(strictSchemaOf(tool), id);
  const validate = ajv.getSchema(id)!;
  if (!validate(args)) throw new Error(`${tool}: not strict-shaped: ${JSON.stringify(validate.errors)} in ${JSON.stringify(args)}`);
  return args;
}

describe("format=openai in strict mode", () => {
  it("every_openai_tool_is_marked_strict_and_satisfies_the_strict_mode_rules", () => {
    const tools = openAiTools();
    expect(tools.map((t) => t.function.name)).toEqual(toolCatalog().map((t) => t.name));
    for (const tool of tools) {
      expect(tool.type).toBe("function");
      expect(Object.keys(tool.function).sort()).toEqual(["description", "name", "parameters", "strict"]);
      expect(tool.function.strict).toBe(true);
      expect(strictModeViolations(tool.function.parameters), tool.function.name).toEqual([]);
    }
  });

  it("the_checker_refuses_the_catalogs_own_input_schemas_for_what_strict_mode_refuses", () => {
    const violations = (tool: string) => strictModeViolations(toolCatalog().find((t) => t.name === tool)!.input_schema);
    // What made 7 of the 8 tools unusable in strict mode.
    expect(violations("search_offerings")).toEqual(
      expect.arrayContaining([
        "#: every property must be required (not: query, attributes, limit)",
        "#/properties/query: keyword 'maxLength' not supported on string",
        "#/properties/attributes: keyword 'propertyNames' not supported on object",
        "#/properties/attributes: additionalProperties must be false",
        "#/properties/attributes: an object must list its properties",
      ]),
    );
    expect(violations("record_csat")).toContain("#: every property must be required (not: comment, tool_call_id)");
    expect(violations("get_conversation_context")).toEqual([]);
    expect(strictModeViolations({ type: "object", properties: {}, required: [], additionalProperties: false, title: "x" })).toEqual([
      "#: keyword 'title' not supported on object",
    ]);
    expect(strictModeViolations({ anyOf: [{ type: "object" }] })).toEqual(
      expect.arrayContaining(["#: the root must be an object", "#: the root must not be anyOf"]),
    );
    expect(
      strictModeViolations({
        type: "object",
        properties: { a: { type: "string", format: "uri", minLength: 1 } },
        required: ["a"],
        additionalProperties: false,
      }),
    ).toEqual(["#/properties/a: keyword 'minLength' not supported on string", "#/properties/a: format 'uri' not supported"]);
  });

  it("keeps_every_field_of_the_tool_and_makes_exactly_the_optional_ones_nullable", () => {
    for (const { name, input_schema } of toolCatalog()) {
      const strict = strictSchemaOf(name);
      expect(Object.keys(strict.properties)).toEqual(Object.keys(input_schema.properties as object));
      const optional = optionalArguments(name);
      for (const [field, schema] of Object.entries(strict.properties as Record<string, Schema>)) {
        const original = (input_schema.properties as Record<string, Schema>)[field];
        expect(admitsNull(schema), `${name}.${field}`).toBe(optional.includes(field) || admitsNull(original));
      }
    }
    // A map is a list of { key, value } pairs, its bounds said in words.
    const attributes = strictSchemaOf("search_offerings").properties.attributes;
    expect(attributes.anyOf[0].items).toEqual({
      type: "object",
      properties: {
        key: { type: "string", description: "1 to 100 characters." },
        value: { anyOf: [{ type: "string", description: "At most 500 characters." }, { type: "number" }, { type: "boolean" }] },
      },
      required: ["key", "value"],
      additionalProperties: false,
    });
    expect(attributes.description).toContain('{"a": 1} is [{"key": "a", "value": 1}]');
  });

  it("the_other_formats_keep_the_tools_own_input_schema", () => {
    const inputs = toolCatalog().map((t) => t.input_schema);
    expect((toolCatalogAs("anthropic") as { input_schema: Schema }[]).map((t) => t.input_schema)).toEqual(inputs);
    expect((toolCatalogAs("mcp") as { inputSchema: Schema }[]).map((t) => t.inputSchema)).toEqual(inputs);
    expect((inputs[0].properties as Schema).attributes.type).toBe("object");
  });
});

// --- Calls shaped by the strict schemas, on real HTTP ------------------------------------------

type Answer = { ok: boolean; body: any };
type Transport = { name: string; send: (tool: string, args: Record<string, unknown>) => Promise<Answer> };

let server: Server;
let base: string;
const HOUR = 3_600_000;
const at = (hoursFromNow: number) => new Date(Date.now() + hoursFromNow * HOUR).toISOString();
let callCounter = 0;
const callId = () => `call_${process.pid}_${++callCounter}`;

beforeAll(async () => {
  server = createLeanServer({ next: (_req, res) => void res.writeHead(404).end(), origin: "http://127.0.0.1" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

const rest = (key: string): Transport => ({
  name: "rest",
  send: async (tool, args) => {
    const res = await fetch(`${base}/api/agent/v1/tools/${tool}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    return { ok: res.status === 200, body: await res.json() };
  },
});

async function mcp(key: string): Promise<Transport & { close: () => Promise<void> }> {
  const client = new Client({ name: "strict-model", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/agent/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return {
    name: "mcp",
    send: async (tool, args) => {
      const result = await client.callTool({ name: tool, arguments: args });
      return result.isError ? { ok: false, body: JSON.parse((result.content as { text: string }[])[0].text) } : { ok: true, body: result.structuredContent };
    },
    close: () => client.close(),
  };
}

/** A tenant with what the tools act on, made over /api/v1. */
async function world() {
  const { tenantId, key } = await tenantWithKey();
  const conversation = await makeConversation(tenantId);
  const offering = (
    await call("POST", "/offerings", { key, body: { title: "Marina apartment", price: 1, price_currency: "AED", attributes: { bedrooms: 2 } } })
  ).body;
  await call("POST", "/offerings", { key, body: { title: "Marina villa", price: 2, price_currency: "AED", attributes: { bedrooms: 3 } } });
  const lead = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id } })).body;
  const appointment = async () =>
    (
      await call("POST", "/appointments", {
        key,
        body: { customer_name: "Ali", customer_phone: "+971501234567", scheduled_start: at(24), scheduled_end: at(25) },
      })
    ).body.id as string;
  return { tenantId, key, conversationId: conversation.id as string, offeringId: offering.id as string, leadId: lead.id as string, appointment };
}

/** Each tool's call with every argument given (maps as pairs): a strict model's full call. */
function fullCalls(w: Awaited<ReturnType<typeof world>>): Record<string, () => Promise<Record<string, unknown>>> {
  return {
    search_offerings: async () => ({ query: "marina", attributes: pairs({ bedrooms: 2 }), limit: 5 }),
    get_conversation_context: async () => ({ conversation_id: w.conversationId }),
    upsert_lead: async () => ({
      conversation_id: w.conversationId,
      customer_name: "Ali Reza",
      customer_phone: "+971501234567",
      customer_email: "ali@example.com",
      offering_id: w.offeringId,
      attributes: pairs({ budget_aed: 900000 }),
      notes: "Wants a sea view",
      status: "qualified",
      tool_call_id: callId(),
    }),
    book_appointment: async () => ({
      customer_name: "Ali Reza",
      customer_phone: "+971501234567",
      customer_email: "ali@example.com",
      scheduled_start: at(48),
      scheduled_end: at(49),
      conversation_id: w.conversationId,
      lead_id: w.leadId,
      offering_id: w.offeringId,
      location_text: "Marina Gate 2, lobby",
      google_calendar_event_id: "evt-1",
      tool_call_id: callId(),
    }),
    reschedule_appointment: async () => ({ appointment_id: await w.appointment(), scheduled_start: at(72), scheduled_end: at(73), tool_call_id: callId() }),
    cancel_appointment: async () => ({ appointment_id: await w.appointment(), tool_call_id: callId() }),
    request_handoff: async () => ({ lead_id: w.leadId, reason: "Wants to negotiate", tool_call_id: callId() }),
    record_csat: async () => ({ conversation_id: w.conversationId, score: 5, comment: "Quick", tool_call_id: callId() }),
  };
}

describe.each(["rest", "mcp"] as const)("strict-shaped calls over %s", (kind) => {
  let w: Awaited<ReturnType<typeof world>>;
  let transport: Transport & { close?: () => Promise<void> };

  beforeAll(async () => {
    w = await world();
    transport = kind === "rest" ? rest(w.key) : await mcp(w.key);
  });
  afterAll(async () => {
    await transport?.close?.();
  });

  it("every_tool_accepts_null_for_each_optional_argument_one_at_a_time_and_all_at_once", async () => {
    const calls = fullCalls(w);
    expect(Object.keys(calls)).toEqual(toolCatalog().map((t) => t.name));
    for (const [tool, full] of Object.entries(calls)) {
      const optional = optionalArguments(tool);
      const variants = [
        ...optional.map((field) => async () => ({ ...(await full()), [field]: null })),
        async () => ({ ...(await full()), ...Object.fromEntries(optional.map((field) => [field, null])) }),
      ];
      for (const variant of variants) {
        const args = assertStrictShaped(tool, await variant());
        const answer = await transport.send(tool, args);
        expect(answer, `${tool} ${JSON.stringify(args)}`).toMatchObject({ ok: true });
      }
    }
  });

  it("a_null_optional_argument_leaves_the_field_as_it_was_where_an_omitted_one_would", async () => {
    const conversation = (await makeConversation(w.tenantId)).id;
    const upsert = (fields: Record<string, unknown>) =>
      transport.send(
        "upsert_lead",
        assertStrictShaped("upsert_lead", {
          ...Object.fromEntries(optionalArguments("upsert_lead").map((f) => [f, null])),
          conversation_id: conversation,
          ...fields,
        }),
      );
    const first = await upsert({ customer_name: "Ali Reza", notes: "Sea view", customer_email: "ali@example.com" });
    expect(first).toMatchObject({ ok: true, body: { customer_name: "Ali Reza", notes: "Sea view", customer_email: "ali@example.com" } });
    const second = await upsert({ status: "qualified" });
    expect(second).toMatchObject({
      ok: true,
      body: { id: first.body.id, customer_name: "Ali Reza", notes: "Sea view", customer_email: "ali@example.com", status: "qualified" },
    });
    // On /api/v1 a null still clears the field (PATCH semantics are not the tools').
    const patched = await call("PATCH", `/leads/${first.body.id}`, { key: w.key, body: { notes: null } });
    expect(patched.status).toBe(200);
    expect(patched.body.notes).toBeNull();

    const csat = await transport.send(
      "record_csat",
      assertStrictShaped("record_csat", { conversation_id: conversation, score: 4, comment: null, tool_call_id: null }),
    );
    expect(csat).toMatchObject({ ok: true, body: { score: 4, comment: null } });
  });

  it("attributes_as_key_value_pairs_set_merge_and_delete_like_the_object_and_filter_the_search", async () => {
    const conversation = (await makeConversation(w.tenantId)).id;
    const upsert = (attributes: { key: string; value: unknown }[]) =>
      transport.send(
        "upsert_lead",
        assertStrictShaped("upsert_lead", {
          ...Object.fromEntries(optionalArguments("upsert_lead").map((f) => [f, null])),
          conversation_id: conversation,
          attributes,
        }),
      );
    const created = await upsert(pairs({ budget_aed: 900000, move_in: "2026-12", furnished: true }));
    expect(created).toMatchObject({ ok: true, body: { attributes: { budget_aed: 900000, move_in: "2026-12", furnished: true } } });
    const merged = await upsert([
      { key: "move_in", value: null },
      { key: "bedrooms", value: 2 },
    ]);
    expect(merged.body.attributes).toEqual({ budget_aed: 900000, furnished: true, bedrooms: 2 });
    // Stored so: /api/v1 reads the same object.
    expect((await call("GET", `/leads/${created.body.id}`, { key: w.key })).body.attributes).toEqual({ budget_aed: 900000, furnished: true, bedrooms: 2 });

    const search = await transport.send(
      "search_offerings",
      assertStrictShaped("search_offerings", { query: "marina", attributes: pairs({ bedrooms: 3 }), limit: null }),
    );
    expect(search.ok).toBe(true);
    expect(search.body.data.map((o: { title: string }) => o.title)).toEqual(["Marina villa"]);
  });

  it("malformed_pairs_a_repeated_key_and_a_null_required_argument_are_400s_naming_the_field", async () => {
    const refused = async (tool: string, args: Record<string, unknown>, message: string) => {
      const answer = await transport.send(tool, args);
      expect(answer).toEqual({ ok: false, body: { error: { code: "bad_request", message } } });
    };
    await refused(
      "search_offerings",
      { attributes: [{ key: "bedrooms" }] },
      "invalid field 'attributes[0]': must be an object with a string 'key' and a 'value'",
    );
    await refused(
      "search_offerings",
      { attributes: [{ key: "bedrooms", value: 2, extra: 1 }] },
      "invalid field 'attributes[0]': must be an object with a string 'key' and a 'value'",
    );
    await refused(
      "search_offerings",
      {
        attributes: [
          { key: "bedrooms", value: 2 },
          { key: "bedrooms", value: 3 },
        ],
      },
      "invalid field 'attributes[1]': repeats the key of an earlier pair",
    );
    await refused(
      "search_offerings",
      { attributes: pairs({ bedrooms: null }) },
      expect.stringContaining("invalid field 'attributes.bedrooms'") as unknown as string,
    );
    await refused(
      "record_csat",
      { conversation_id: null, score: 5, comment: null, tool_call_id: null },
      expect.stringContaining("'conversation_id'") as unknown as string,
    );
  });
});
