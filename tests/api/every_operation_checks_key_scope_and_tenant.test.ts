// The common route checks, run for every operation the server serves: each /api/v1 operation of
// the served OpenAPI document, each agent tool endpoint of /api/agent/v1's document, and each tool
// MCP lists at /api/agent/mcp. The list is read from those documents at run time (tests/api/route-walk.ts),
// so a new route is walked without being listed here, and one the walk cannot exercise fails it.
// Over real HTTP through the production lean front (in this process, so the embedded database stays ours).
//   - no key, or an unknown key: 401 with the exact envelope;
//   - a key without the scope the operation declares (its `x-required-scopes`, set from the scope
//     its procedure checks): 403 naming that scope; a key with only that scope gets past the check;
//   - another tenant's id, in the path or the body: the very answer a random id gets (status, body
//     byte for byte, headers apart from request id, date and rate-limit counts), while the caller's
//     own id gets another answer (so the id is what the request turns on);
//     and nothing of the other tenant changes (all it reads through /api/v1 is as before);
//   - another tenant's row as a list's cursor: the same 400 as an unknown cursor.
import { randomBytes, randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCallReport } from "../../server/calls/calls.service";
import { createLeanServer } from "../../server/http/lean-server";
import { SCOPES, type Scope } from "../../server/auth/principal";
import { newKey, tenantWithKey } from "../helpers/api";
import { tenantDb, uniquePhone } from "../helpers/conversations";
import { comparable, operationsOf, readServed, type Answer, type Operation, type Served } from "./route-walk";

const envelope = (code: string, message: string) => JSON.stringify({ error: { code, message } });
const NO_KEY = envelope("unauthorized", "missing or malformed Authorization header");
const UNKNOWN_KEY = envelope("unauthorized", "unknown or revoked api key");
const NOT_FOUND = envelope("not_found", "resource not found");
const UNKNOWN_CURSOR = envelope("bad_request", "invalid field 'cursor': not a cursor of this list");
const missingScope = ([scope, ...also]: string[]) => envelope("forbidden", `key missing required scope '${scope}'${also.map((s) => ` (or '${s}')`).join("")}`);

/** One row of each kind a tenant has, by kind; `conversation` is the conversation a row belongs to. */
type Rows = Record<string, { id: string; conversation?: string }>;
type Tenant = { tenantId: string; key: string; rows: Rows };

const STATUS_OF_CODE: Record<string, number> = { bad_request: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, rate_limited: 429 };

/**
 * A tool call over MCP answers HTTP 200 with a result; a refused one is an `isError` result whose
 * text is the error envelope. Seen as the REST answer would be: the envelope with its status.
 */
function refusalOf(operation: Operation, answer: Answer): { status: number; text: string } {
  if (operation.surface !== "mcp" || answer.status !== 200) return answer;
  const result = JSON.parse(answer.text).result;
  if (!result?.isError) return answer;
  const text: string = result.content[0].text;
  return { status: STATUS_OF_CODE[JSON.parse(text).error.code] ?? 500, text };
}

describe("every operation of /api/v1, the agent tools and MCP", () => {
  let server: Server;
  let base: string;
  let served: Served;
  let operations: Operation[];
  /** A owns the rows B asks for; C is the scope checks' tenant, so their calls change none of B's rows. */
  let a: Tenant;
  let b: Tenant;
  let c: Tenant;
  const keys = new Map<string, Promise<string>>();
  /** A key of tenant C with exactly these scopes (one per set, made once). */
  const keyWith = (scopes: string[]) => {
    const name = [...scopes].sort().join(",");
    if (!keys.has(name))
      keys.set(
        name,
        newKey(c.tenantId, scopes as Scope[]).then((k) => k.key),
      );
    return keys.get(name)!;
  };

  /** A tenant with one row of each kind, made through the API as an integrator makes them (a call as a provider reports it). */
  async function tenantWithRows(): Promise<Tenant> {
    const { tenantId, key } = await tenantWithKey();
    const example = (method: string, path: string) => served.apiDocument.paths[path][method].requestBody.content["application/json"].example;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}/api/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
      return JSON.parse(text) as { id: string };
    };
    const offering = await post("/offerings", example("post", "/offerings"));
    const conversation = await post("/conversations", example("post", "/conversations"));
    const message = await post(`/conversations/${conversation.id}/send`, example("post", "/conversations/{id}/send"));
    const lead = await post("/leads", { ...example("post", "/leads"), conversation_id: conversation.id, offering_id: offering.id });
    const appointment = await post("/appointments", {
      ...example("post", "/appointments"),
      scheduled_start: new Date(Date.now() + 86_400_000).toISOString(),
      scheduled_end: new Date(Date.now() + 90_000_000).toISOString(),
      conversation_id: conversation.id,
      lead_id: lead.id,
      offering_id: offering.id,
    });
    const reported = await applyCallReport(await tenantDb(tenantId), {
      provider: "retell",
      providerCallId: `walk_${randomUUID()}`,
      direction: "inbound",
      customerNumber: uniquePhone(),
      startedAt: new Date(),
    });
    const events = await fetch(`${base}/api/v1/events?limit=1`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
    const webhookEndpoint = await post("/webhook-endpoints", webhookEndpointBody());
    const rows: Rows = {
      offerings: offering,
      conversations: conversation,
      messages: { id: message.id, conversation: conversation.id },
      leads: lead,
      appointments: appointment,
      calls: { id: reported.call.id, conversation: reported.conversation.id },
      events: { id: events.data[0].id },
      "webhook-endpoints": webhookEndpoint,
    };
    return { tenantId, key, rows };
  }

  /** The documented example with a URL this process accepts (loopback, allowed below): nothing listens there. */
  const webhookEndpointBody = () => ({
    ...served.apiDocument.paths["/webhook-endpoints"].post.requestBody.content["application/json"].example,
    url: `http://127.0.0.1:9/walk-${randomUUID()}`,
  });

  /** A DELETE took the tenant's own row of that kind: a new one takes its place for the operations walked after it. */
  async function replaceDeleted(operation: Operation, tenant: Tenant, kind: string | undefined) {
    if (!operation.label.startsWith("DELETE ") || kind !== "webhook-endpoints") return;
    const res = await fetch(`${base}/api/v1/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify(webhookEndpointBody()),
    });
    if (res.status !== 201) throw new Error(`POST /webhook-endpoints answered ${res.status}: ${await res.text()}`);
    tenant.rows[kind] = (await res.json()) as { id: string };
  }

  const previousLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
  beforeAll(async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "1"; // the webhook endpoints' rows point at 127.0.0.1
    server = createLeanServer({ next: (_req, res) => void res.writeHead(404).end(), origin: "http://127.0.0.1" });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const reader = await tenantWithKey(["read"]);
    served = await readServed(base, reader.key);
    operations = operationsOf(base, served);
    a = await tenantWithRows();
    b = await tenantWithRows();
    c = await tenantWithRows();
  });

  afterAll(async () => {
    if (previousLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
    else process.env.WEBHOOK_ALLOW_LOOPBACK = previousLoopback;
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** The operation's example with its ids made the caller's own (and a path id always given). */
  function ownValues(operation: Operation, rows: Rows): Record<string, unknown> {
    const values = { ...operation.example };
    for (const field of operation.ids) {
      if (field.in !== "path" && !(field.name in values)) continue;
      const row = field.kind ? rows[field.kind] : undefined;
      if (row) values[field.name] = row.id;
    }
    return values;
  }

  it("walks_every_operation_of_the_served_documents_and_every_tool_mcp_lists", () => {
    const labels = operations.map((o) => o.label);
    expect(labels.filter((l) => l.startsWith("GET /api/v1") || l.startsWith("POST /api/v1")).length).toBeGreaterThan(0);
    expect(labels.filter((l) => l.startsWith("MCP ")).map((l) => l.slice("MCP tools/call ".length))).toEqual(served.catalog.map((t) => t.name));
    expect(labels).toEqual(expect.arrayContaining(served.catalog.map((t) => `POST /api/agent/v1/tools/${t.name}`)));
    const problems = operations.flatMap((o) => o.problems.map((p) => `${o.label}: ${p}`));
    const undeclared = operations.filter((o) => o.scopes.length === 0 || o.scopes.some((s) => !SCOPES.includes(s as Scope)));
    expect(problems).toEqual([]);
    expect(undeclared.map((o) => `${o.label} declares the scopes ${JSON.stringify(o.scopes)}`)).toEqual([]);
  });

  it("an_operation_the_walk_cannot_exercise_is_a_problem_that_fails_it_not_a_skip", () => {
    const uuid = { type: "string", format: "uuid" };
    const synthetic: Served = {
      apiDocument: {
        paths: {
          "/widgets/{slug}": { get: { "x-required-scopes": ["read"], parameters: [{ name: "slug", in: "path", schema: { type: "string" } }] } },
          "/gadgets": { post: { "x-required-scopes": [], requestBody: { content: { "application/json": { schema: { properties: { gizmo_id: uuid } } } } } } },
        },
      },
      agentDocument: { paths: {} },
      catalog: [],
      mcpTools: [{ name: "new_tool", inputSchema: { properties: {} } }],
    };
    const walked = operationsOf(base, synthetic).map((o) => ({ label: o.label, scopes: o.scopes, ids: o.ids, problems: o.problems }));
    expect(walked).toEqual([
      {
        label: "GET /api/v1/widgets/{slug}",
        scopes: ["read"],
        ids: [],
        problems: ["path parameter 'slug' is not an id, and the walk cannot make one"],
      },
      {
        label: "POST /api/v1/gadgets",
        scopes: [],
        ids: [{ name: "gizmo_id", in: "body", kind: "gizmos" }],
        problems: ["its request body has no documented example to build a valid request from"],
      },
      {
        label: "MCP tools/call new_tool",
        scopes: [],
        ids: [],
        problems: ["no POST /api/agent/v1/tools/{name} operation declares its scope", "the tool catalog has no example to build a valid call from"],
      },
    ]);
    // An undeclared scope (POST /gadgets) and a kind no tenant has a row of (gizmos) fail the checks below.
    expect(a.rows.gizmos).toBeUndefined();
  });

  it("401_without_a_key_and_with_an_unknown_key_on_every_operation", async () => {
    const wrong: string[] = [];
    const unknownKey = `xapk_live_${randomBytes(24).toString("hex")}`;
    for (const operation of operations) {
      for (const [key, expected] of [
        [null, NO_KEY],
        [unknownKey, UNKNOWN_KEY],
      ] as const) {
        const res = await operation.send(key, ownValues(operation, c.rows));
        if (res.status !== 401 || res.text !== expected || res.headers["content-type"] !== "application/json") {
          wrong.push(`${operation.label} ${key ? "unknown key" : "no key"}: ${res.status} ${res.headers["content-type"]} ${res.text}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("403_naming_the_declared_scope_for_a_key_without_it_on_every_operation", async () => {
    const wrong: string[] = [];
    for (const operation of operations) {
      const key = await keyWith(SCOPES.filter((s) => !operation.scopes.includes(s)));
      const res = refusalOf(operation, await operation.send(key, ownValues(operation, c.rows)));
      const expected = missingScope(operation.scopes);
      if (res.status !== 403 || res.text !== expected) wrong.push(`${operation.label}: ${res.status} ${res.text} (expected 403 ${expected})`);
    }
    expect(wrong).toEqual([]);
  });

  it("a_key_with_only_one_declared_scope_gets_past_the_scope_check_on_every_operation", async () => {
    const wrong: string[] = [];
    for (const operation of operations) {
      for (const scope of operation.scopes) {
        const res = refusalOf(operation, await operation.send(await keyWith([scope]), ownValues(operation, c.rows)));
        if (res.status === 401 || res.status === 403) wrong.push(`${operation.label} with only '${scope}': ${res.status} ${res.text}`);
        for (const field of operation.ids) if (field.in === "path") await replaceDeleted(operation, c, field.kind);
      }
    }
    expect(wrong).toEqual([]);
  });

  /** What tenant A's key reads through every /api/v1 GET: a write that reached A's rows changes it. */
  async function everythingAReads(): Promise<string[]> {
    const reads = operations.filter((o) => o.surface === "api" && o.label.startsWith("GET "));
    return Promise.all(reads.map(async (o) => `${o.label} ${(await o.send(a.key, ownValues(o, a.rows))).text}`));
  }

  it("another_tenants_id_answers_the_same_bytes_as_a_missing_one_on_every_operation", async () => {
    const wrong: string[] = [];
    let compared = 0;
    const before = await everythingAReads();
    for (const operation of operations) {
      // A key of its own per operation: the walk stays far below the per-key limit.
      const key = (await newKey(b.tenantId)).key;
      for (const field of operation.ids) {
        const theirs = field.kind ? a.rows[field.kind] : undefined;
        const own = field.kind ? b.rows[field.kind] : undefined;
        if (!theirs || !own) {
          wrong.push(`${operation.label}: the walk cannot make a row of kind '${field.kind}' for '${field.name}'`);
          continue;
        }
        const values = ownValues(operation, b.rows);
        const missingAnswer = await operation.send(key, { ...values, [field.name]: randomUUID() });
        const theirAnswer = await operation.send(key, { ...values, [field.name]: theirs.id });
        const ownAnswer = await operation.send(key, { ...values, [field.name]: own.id });
        await replaceDeleted(operation, b, field.kind);
        const missing = comparable(missingAnswer);
        compared++;
        if (JSON.stringify(comparable(theirAnswer)) !== JSON.stringify(missing)) {
          wrong.push(
            `${operation.label} ${field.name}: another tenant's id answered ${JSON.stringify(comparable(theirAnswer))}, a missing one ${JSON.stringify(missing)}`,
          );
        }
        if (JSON.stringify(comparable(ownAnswer)) === JSON.stringify(missing)) {
          wrong.push(
            `${operation.label} ${field.name}: its own id answers like a missing one (${missing.status} ${missing.body}): the walk's request does not turn on the id`,
          );
        }
        if (field.in === "path" && (missingAnswer.status !== 404 || missingAnswer.text !== NOT_FOUND)) {
          wrong.push(`${operation.label}: a missing path id answered ${missingAnswer.status} ${missingAnswer.text}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThan(0);
    // Nothing B sent with A's ids changed anything of A's (its rows, its events, its counts).
    expect(await everythingAReads()).toEqual(before);
  });

  it("another_tenants_row_as_a_cursor_answers_like_an_unknown_cursor_on_every_list", async () => {
    const wrong: string[] = [];
    const key = (await newKey(b.tenantId)).key;
    const lists = operations.filter((o) => o.cursorKind);
    for (const operation of lists) {
      const kind = operation.cursorKind!;
      if (!a.rows[kind] || !b.rows[kind]) {
        wrong.push(`${operation.label}: the walk cannot make a row of kind '${kind}' for its cursor`);
        continue;
      }
      // A list under /conversations/{id} pages through the conversation its own cursor row is in.
      const values = ownValues(operation, b.rows);
      if (b.rows[kind].conversation && operation.ids.some((f) => f.in === "path" && f.kind === "conversations")) values.id = b.rows[kind].conversation;
      const unknown = await operation.send(key, { ...values, cursor: randomUUID() });
      const theirs = await operation.send(key, { ...values, cursor: a.rows[kind].id });
      const own = await operation.send(key, { ...values, cursor: b.rows[kind].id });
      if (unknown.status !== 400 || unknown.text !== UNKNOWN_CURSOR)
        wrong.push(`${operation.label}: an unknown cursor answered ${unknown.status} ${unknown.text}`);
      if (JSON.stringify(comparable(theirs)) !== JSON.stringify(comparable(unknown))) {
        wrong.push(`${operation.label}: another tenant's cursor answered ${theirs.status} ${theirs.text}`);
      }
      if (own.status !== 200) wrong.push(`${operation.label}: its own cursor answered ${own.status} ${own.text}`);
    }
    expect(wrong).toEqual([]);
    expect(lists.length).toBeGreaterThan(0);
  });
});
