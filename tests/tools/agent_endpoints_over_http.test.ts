// The tools over real HTTP through the lean front: POST /api/agent/v1/tools/{tool} and
// GET /api/agent/v1/tools with /api/v1's contract (auth, envelope, strict bodies, limits), and the
// same tools over MCP (streamable HTTP) with the SDK's own client, same keys and limits.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { mountFor } from "../../server/http/lean-server";
import { toolCatalogAs } from "../../server/tools/catalog";
import { newKey, tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";
import { requireNextBuild, startMount } from "../helpers/http-mounts";
import { startOfNextWindowIn, windowClockEnv } from "../helpers/rate-limit-clock";

requireNextBuild();

const MISSING = "00000000-0000-4000-8000-000000000000";
const HOUR = 3_600_000;
const at = (hoursFromNow: number) => new Date(Date.now() + hoursFromNow * HOUR).toISOString();
const booking = (extra: Record<string, unknown> = {}) => ({
  customer_name: "Ali",
  customer_phone: "+971501234567",
  scheduled_start: at(24),
  scheduled_end: at(25),
  ...extra,
});

describe("mountFor: agent paths", () => {
  it.each([
    ["/api/agent/v1/tools", "agent"],
    ["/api/agent/v1/tools/book_appointment", "agent"],
    ["/api/agent/v1/openapi.json", "agent"],
    ["/api/agent/mcp", "mcp"],
    ["/api/agent/mcp/", "next"],
    ["/api/agent/v2/tools", "next"],
  ])("%s -> %s", (path, mount) => {
    expect(mountFor(path)).toBe(mount);
  });
});

describe("agent tools over HTTP through the lean front (needs `next build`)", () => {
  let server: Running;
  let tenantId: string;
  let key: string;
  let readOnlyKey: string;
  let conversationId: string;
  let limitedKey: string;
  let mcpKey: string;

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey());
    readOnlyKey = (await newKey(tenantId, ["assistant:read"])).key;
    conversationId = (await makeConversation(tenantId)).id;
    limitedKey = (await tenantWithKey()).key;
    mcpKey = (await tenantWithKey()).key;
    server = await startMount("lean", windowClockEnv());
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  const post = (tool: string, body: unknown, as: string | null = key, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/agent/v1/tools/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(as ? { authorization: `Bearer ${as}` } : {}), ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("a_tool_call_answers_200_with_its_result_and_the_tool_layers_rate_limit_headers", async () => {
    const res = await post("book_appointment", booking({ conversation_id: conversationId, tool_call_id: "http-1" }), key, { "x-request-id": "agent-1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("agent-1");
    expect(res.headers.get("x-ratelimit-limit")).toBe("50");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("49");
    const first = await res.text();
    expect(JSON.parse(first)).toMatchObject({ status: "confirmed", conversation_id: conversationId });
    const again = await post("book_appointment", booking({ conversation_id: conversationId, tool_call_id: "http-1" }));
    expect(await again.text()).toBe(first);
  });

  it("lists_the_tools_in_the_asked_format", async () => {
    const res = await fetch(`${server.url}/api/agent/v1/tools?format=openai`, { headers: { authorization: `Bearer ${readOnlyKey}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: toolCatalogAs("openai") });
    const doc = await (await fetch(`${server.url}/api/agent/v1/openapi.json`)).json();
    expect(Object.keys(doc.paths)).toContain("/tools/book_appointment");
  });

  it("answers_400_naming_the_field_for_bad_bodies", async () => {
    const cases: [unknown, string][] = [
      [booking({ surprise: 1 }), "unknown field 'surprise'"],
      [booking({ scheduled_start: "soon" }), "invalid field 'scheduled_start': must be an ISO 8601 date-time"],
      ["{not json", "request body is not valid JSON"],
      ["[1]", "request body must be a JSON object"],
    ];
    for (const [body, message] of cases) {
      const res = await post("book_appointment", body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code: "bad_request", message } });
    }
    const wrongType = await post("book_appointment", JSON.stringify(booking()), key, { "content-type": "text/plain" });
    expect(wrongType.status).toBe(400);
    const huge = await post("record_csat", { conversation_id: conversationId, score: 5, comment: "x".repeat(1_100_000) });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error.code).toBe("bad_request");
  });

  // No key, a key without the tool's scope, another tenant's id: tests/api/every_operation_checks_key_scope_and_tenant.test.ts.
  it("an_unknown_tool_is_a_404_naming_the_endpoint", async () => {
    const noTool = await post("delete_everything", {});
    expect(noTool.status).toBe(404);
    expect(await noTool.json()).toEqual({ error: { code: "not_found", message: "no endpoint POST /api/agent/v1/tools/delete_everything" } });
  });

  it("the_51st_call_of_one_tool_in_a_minute_is_a_429_while_another_tool_still_answers", { timeout: 120_000 }, async () => {
    await startOfNextWindowIn(server.proc);
    for (let i = 0; i < 50; i++) expect((await post("search_offerings", { query: "flat" }, limitedKey)).status).toBe(200);
    const refused = await post("search_offerings", { query: "flat" }, limitedKey);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: { code: "rate_limited", message: "per-tool rate limit exceeded" } });
    expect(refused.headers.get("x-ratelimit-limit")).toBe("50");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const other = await post("get_conversation_context", { conversation_id: MISSING }, limitedKey);
    expect(other.status).toBe(404);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("49");
  });

  const mcpClient = async (as: string) => {
    const client = new Client({ name: "test-assistant", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/agent/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${as}` } },
    });
    await client.connect(transport);
    return client;
  };

  it("mcp_the_sdk_client_lists_the_tools_and_calls_two", async () => {
    const client = await mcpClient(key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(toolCatalogAs("mcp").map((t) => t.name));
      expect(tools.find((t) => t.name === "book_appointment")!.inputSchema).toEqual(
        toolCatalogAs("mcp").find((t) => t.name === "book_appointment")!.inputSchema,
      );

      const context = await client.callTool({ name: "get_conversation_context", arguments: { conversation_id: conversationId } });
      expect(context.isError).toBeFalsy();
      expect(context.structuredContent).toMatchObject({ conversation: { id: conversationId }, lead: null });

      const booked = await client.callTool({ name: "book_appointment", arguments: booking({ conversation_id: conversationId }) });
      expect(booked.isError).toBeFalsy();
      expect(booked.structuredContent).toMatchObject({ status: "confirmed", conversation_id: conversationId });
      expect(JSON.parse((booked.content as { text: string }[])[0].text)).toEqual(booked.structuredContent);
      // It is the same booking the REST endpoint sees.
      const seen = await post("get_conversation_context", { conversation_id: conversationId });
      expect((await seen.json()).upcoming_appointments.map((a: { id: string }) => a.id)).toContain((booked.structuredContent as { id: string }).id);
    } finally {
      await client.close();
    }
  });

  it("mcp_refusals_are_tool_errors_carrying_the_envelope", async () => {
    const client = await mcpClient(readOnlyKey);
    try {
      const forbidden = await client.callTool({ name: "book_appointment", arguments: booking() });
      expect(forbidden.isError).toBe(true);
      expect(JSON.parse((forbidden.content as { text: string }[])[0].text)).toEqual({
        error: { code: "forbidden", message: "key missing required scope 'appointments:write'" },
      });
      const invalid = await client.callTool({ name: "get_conversation_context", arguments: { conversation_id: "nope" } });
      expect(JSON.parse((invalid.content as { text: string }[])[0].text)).toEqual({
        error: { code: "bad_request", message: "invalid field 'conversation_id': must be a uuid" },
      });
    } finally {
      await client.close();
    }
  });

  it("mcp_shares_the_per_tool_limit_with_the_rest_endpoint", { timeout: 120_000 }, async () => {
    await startOfNextWindowIn(server.proc);
    for (let i = 0; i < 50; i++) expect((await post("search_offerings", {}, mcpKey)).status).toBe(200);
    const client = await mcpClient(mcpKey);
    try {
      const refused = await client.callTool({ name: "search_offerings", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.parse((refused.content as { text: string }[])[0].text)).toEqual({ error: { code: "rate_limited", message: "per-tool rate limit exceeded" } });
    } finally {
      await client.close();
    }
  });

  it("mcp_the_sdk_client_reports_an_unknown_key_and_get_is_a_405", async () => {
    await expect(mcpClient(`xapk_live_${"0".repeat(48)}`)).rejects.toThrow(/unknown or revoked api key/);
    const get = await fetch(`${server.url}/api/agent/mcp`, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});
