// Every MCP request that passes authentication counts against the key's and the tenant's limits,
// over real HTTP through the lean front (on the store this run is configured with: Redis when
// REDIS_URL is set, in-process otherwise). A message that calls no tool (ping, initialize,
// tools/list, a notification) counts once, a batch counts each of its messages, a tool call counts
// once through its own procedure, and past the limit the HTTP answer is the 429 envelope with the
// refusing layer's headers. The key's limit is 20 a minute here (the tenant's stays at its default).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { toolCatalogAs } from "../../server/tools/catalog";
import { newKey, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { startOfNextWindowIn, windowClockEnv } from "../helpers/rate-limit-clock";

const PER_KEY = 20;
const PER_KEY_REFUSAL = { error: { code: "rate_limited", message: "per-key rate limit exceeded" } };
const MCP_ACCEPT = "application/json, text/event-stream";

type Answer = { status: number; headers: Headers; body: any };

let server: Running;
let windowStart: number;
/** A tenant and key per test, made before the server starts (the embedded database takes one process). */
const keys: { tenantId: string; key: string; other: string }[] = [];
const nextKey = () => keys.shift()!;

beforeAll(async () => {
  for (let i = 0; i < 6; i++) {
    const { tenantId, key } = await tenantWithKey();
    keys.push({ tenantId, key, other: (await newKey(tenantId)).key });
  }
  server = await startMount("lean", { ...windowClockEnv(), RATE_LIMIT_PER_KEY: String(PER_KEY) });
}, 180_000);
afterAll(async () => {
  await server?.stop();
});
// Exact counts need one window: each test starts just after the next one begins.
beforeEach(async () => {
  windowStart = await startOfNextWindowIn(server.proc);
});

async function post(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${server.url}/api/agent/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: MCP_ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
const pings = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ping(from + i));
const remaining = (a: Answer) => a.headers.get("x-ratelimit-remaining");
const resetHeader = () => String((windowStart + 60_000) / 1000);

/** Uses up `key`'s limit with single pings, checking each admission's headers. */
async function useUp(key: string): Promise<void> {
  for (let i = 1; i <= PER_KEY; i++) {
    const a = await post(key, ping(i));
    expect([a.status, a.body, a.headers.get("x-ratelimit-limit"), remaining(a)]).toEqual([
      200,
      { jsonrpc: "2.0", id: i, result: {} },
      "20",
      String(PER_KEY - i),
    ]);
  }
}

function expectPerKeyRefusal(a: Answer): void {
  expect(a.status).toBe(429);
  expect(a.body).toEqual(PER_KEY_REFUSAL);
  expect(a.headers.get("content-type")).toMatch(/^application\/json/);
  expect(a.headers.get("x-ratelimit-limit")).toBe("20");
  expect(remaining(a)).toBe("0");
  expect(a.headers.get("x-ratelimit-reset")).toBe(resetHeader());
  const retryAfter = Number(a.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe("MCP requests are counted", { timeout: 120_000 }, () => {
  it("429_every_kind_of_message_past_the_keys_limit_answers_the_per_key_envelope_and_headers", async () => {
    const { key, other } = nextKey();
    await useUp(key);
    expectPerKeyRefusal(await post(key, ping(21)));
    expectPerKeyRefusal(await post(key, { jsonrpc: "2.0", id: 22, method: "tools/list" }));
    expectPerKeyRefusal(
      await post(key, {
        jsonrpc: "2.0",
        id: 23,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    );
    expectPerKeyRefusal(await post(key, { jsonrpc: "2.0", method: "notifications/initialized" }));
    expectPerKeyRefusal(await post(key, pings(3, 30)));
    // A body that is not JSON and a GET are counted before they are answered, as on /api/v1.
    const badBody = await fetch(`${server.url}/api/agent/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: MCP_ACCEPT },
      body: "{not json",
    });
    expectPerKeyRefusal({ status: badBody.status, headers: badBody.headers, body: await badBody.json() });
    const get = await fetch(`${server.url}/api/agent/mcp`, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } });
    expectPerKeyRefusal({ status: get.status, headers: get.headers, body: await get.json() });
    // The key's refusals took nothing from its tenant: another key of the tenant still has its 20.
    expect(remaining(await post(other, ping(1)))).toBe("19");
  });

  it("a_batch_of_n_messages_counts_n_and_one_that_does_not_fit_counts_nothing", async () => {
    const { key } = nextKey();
    const one = await post(key, ping(1));
    expect([one.status, remaining(one)]).toEqual([200, "19"]);
    const five = await post(key, pings(5, 2));
    expect(five.status).toBe(200);
    expect(five.body).toEqual(pings(5, 2).map(({ id }) => ({ jsonrpc: "2.0", id, result: {} })));
    expect([five.headers.get("x-ratelimit-limit"), remaining(five)]).toEqual(["20", "14"]);
    // 15 do not fit in 14: the whole batch is refused, and counts nothing.
    expectPerKeyRefusal(await post(key, pings(15, 7)));
    const mixed = await post(key, [ping(30), { jsonrpc: "2.0", id: 31, method: "tools/list" }, { jsonrpc: "2.0", method: "notifications/initialized" }]);
    expect(mixed.status).toBe(200);
    expect(mixed.body).toEqual([
      { jsonrpc: "2.0", id: 30, result: {} },
      { jsonrpc: "2.0", id: 31, result: { tools: toolCatalogAs("mcp") } },
    ]);
    expect(remaining(mixed)).toBe("11");
    const rest = await post(key, pings(11, 40));
    expect([rest.status, remaining(rest)]).toEqual([200, "0"]);
    expectPerKeyRefusal(await post(key, ping(60)));
  });

  it("a_tool_call_counts_once_against_the_key_through_its_procedure", async () => {
    const { key } = nextKey();
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search_offerings", arguments: {} } });
    const alone = await post(key, call(1));
    expect(alone.status).toBe(200);
    expect(alone.body.result.isError).toBeUndefined();
    // The tool layer's headers (50 a minute): the call was counted by its procedure.
    expect([alone.headers.get("x-ratelimit-limit"), remaining(alone)]).toEqual(["50", "49"]);
    const after = await post(key, ping(2));
    expect(remaining(after)).toBe("18"); // 20 - the tool call - this ping: counted once, not twice
    // In a batch, the request counts the ping and the procedure the call: 2 more on the key.
    const batch = await post(key, [ping(3), call(4)]);
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(2);
    expect(remaining(batch)).toBe("48"); // the tool layer's headers again, its second call
    expect(remaining(await post(key, ping(5)))).toBe("15");
  });

  it("a_tool_call_the_transport_refuses_before_its_procedure_is_counted_by_the_request", async () => {
    const { key } = nextKey();
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_offerings", arguments: {} } };
    // Without text/event-stream in Accept the transport answers 406 and no procedure runs.
    const refused = await post(key, call, { accept: "application/json" });
    expect(refused.status).toBe(406);
    expect(remaining(refused)).toBe("19");
    // A call of a tool that does not exist reaches no procedure either.
    const unknown = await post(key, { ...call, id: 2, params: { name: "delete_everything", arguments: {} } });
    expect(unknown.status).toBe(200);
    expect(unknown.body.error).toEqual({ code: -32602, message: "MCP error -32602: no tool 'delete_everything'" });
    expect(remaining(unknown)).toBe("18");
    expect(remaining(await post(key, ping(3)))).toBe("17");
  });

  it("429_a_burst_of_60_concurrent_pings_on_a_key_limited_to_20_admits_exactly_20", async () => {
    const { key } = nextKey();
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => post(key, ping(i))));
    const admitted = answers.filter((a) => a.status === 200);
    expect(admitted).toHaveLength(20);
    // Each remaining count is handed out once.
    expect(admitted.map((a) => Number(remaining(a))).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(40);
    for (const a of refused) expectPerKeyRefusal(a);
  });

  it("an_sdk_client_session_counts_each_of_its_requests", async () => {
    const { key } = nextKey();
    const client = new Client({ name: "test-assistant", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/api/agent/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    try {
      // initialize, notifications/initialized, and the GET for a server stream (answered 405).
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(toolCatalogAs("mcp").map((t) => t.name));
      const result = await client.callTool({ name: "search_offerings", arguments: {} });
      expect(result.isError).toBeUndefined();
    } finally {
      await client.close();
    }
    // initialize + initialized + GET + tools/list + the tool call + this ping.
    expect(remaining(await post(key, ping(1)))).toBe("14");
  });
});
