// The operations the route walk exercises (every_operation_checks_key_scope_and_tenant.test.ts),
// read at run time from what a running server serves: /api/v1's OpenAPI document, the agent tools'
// document and catalog (/api/agent/v1), and MCP's `tools/list` (/api/agent/mcp). A new route or
// tool is walked without anyone listing it. Each operation carries its declared scopes (the
// document's `x-required-scopes`), its id fields with the kind of row each names, and how to send
// itself over HTTP; whatever the walk cannot make for it is a `problem`, which fails the walk.
import { contractMismatch } from "../helpers/openapi-contract";

export type Answer = { status: number; text: string; headers: Record<string, string> };

/** An id the operation takes, and the kind of row it names (`offerings`, `conversations`, …). */
type IdField = { name: string; in: "path" | "query" | "body"; kind: string | undefined };

export type Operation = {
  /** e.g. `PATCH /api/v1/offerings/{id}`, `MCP tools/call book_appointment` */
  label: string;
  surface: "api" | "agent" | "mcp";
  /** Its `x-required-scopes`: any one of these scopes lets a key call it. */
  scopes: string[];
  ids: IdField[];
  /** The kind of row a list's `cursor` names. */
  cursorKind?: string;
  /** A valid request's fields (the documented example), before its ids are replaced. */
  example: Record<string, unknown>;
  /** Why the walk cannot exercise it (each fails the walk). */
  problems: string[];
  /** Sends one request: path and query fields where the operation takes them, the rest as the body or the tool's arguments. */
  send(key: string | null, values: Record<string, unknown>): Promise<Answer>;
};

type Schema = Record<string, any>;

async function request(url: string, init: { method: string; key: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, { method: init.method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) };
}

/** A `#/components/schemas/…` reference resolved (a tool's JSON Schema has its properties inline). */
const deref = (doc: Schema, schema: Schema | undefined): Schema | undefined =>
  schema?.$ref ? deref(doc, doc.components?.schemas?.[String(schema.$ref).split("/").pop()!]) : schema;

function isUuid(doc: Schema, schema: Schema | undefined): boolean {
  const s = deref(doc, schema);
  if (!s) return false;
  return s.format === "uuid" || [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((branch: Schema) => isUuid(doc, branch));
}

/** `{id}` after `/offerings` names an offering; `lead_id` a lead. Anything else is a kind the walk does not know. */
function kindOf(field: string, path: string): string | undefined {
  if (field === "id") return /\/([a-z_-]+)\/\{id\}/.exec(path)?.[1];
  const named = /^([a-z]+)_id$/.exec(field);
  return named ? `${named[1]}s` : undefined;
}

/** The body's id fields (format uuid, also inside anyOf), from a JSON Schema object. */
function bodyIds(doc: Schema, schema: Schema | undefined, path: string): IdField[] {
  const properties = deref(doc, schema)?.properties ?? {};
  return Object.entries<Schema>(properties)
    .filter(([, property]) => isUuid(doc, property))
    .map(([name]) => ({ name, in: "body" as const, kind: kindOf(name, path) }));
}

/** The operations of an OpenAPI document served under `basePath`; `examples` gives a tool's example body by path. */
function documentOperations(
  base: string,
  basePath: string,
  surface: "api" | "agent",
  doc: Schema,
  examples: (method: string, path: string, operation: Schema) => Record<string, unknown> | undefined,
): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, operation] of Object.entries<Schema>(item)) {
      const label = `${method.toUpperCase()} ${basePath}${path}`;
      const problems: string[] = [];
      const parameters: Schema[] = operation.parameters ?? [];
      const pathParams = parameters.filter((p) => p.in === "path");
      const queryParams = parameters.filter((p) => p.in === "query");
      const ids: IdField[] = [];
      for (const p of pathParams) {
        if (!isUuid(doc, p.schema)) problems.push(`path parameter '${p.name}' is not an id, and the walk cannot make one`);
        else ids.push({ name: p.name, in: "path", kind: kindOf(p.name, path) });
      }
      for (const p of queryParams) if (isUuid(doc, p.schema)) ids.push({ name: p.name, in: "query", kind: kindOf(p.name, path) });
      const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
      ids.push(...bodyIds(doc, bodySchema, path));
      const example: Record<string, unknown> = {};
      // A query parameter the operation needs comes from its documented example.
      for (const p of queryParams) if (p.required) example[p.name] = p.example;
      if (operation.requestBody) {
        const body = examples(method, path, operation);
        if (!body) problems.push("its request body has no documented example to build a valid request from");
        Object.assign(example, body);
      }
      const cursor = queryParams.some((p) => p.name === "cursor");
      operations.push({
        label,
        surface,
        scopes: operation["x-required-scopes"] ?? [],
        ids,
        cursorKind: cursor
          ? path
              .split("/")
              .filter((segment) => segment && !segment.startsWith("{"))
              .pop()
          : undefined,
        example,
        problems,
        async send(key, values) {
          const rest = { ...values };
          const target = path.replace(/\{(\w+)\}/g, (_, name: string) => {
            const value = rest[name];
            delete rest[name];
            return encodeURIComponent(String(value));
          });
          const query = new URLSearchParams();
          for (const p of queryParams) {
            if (rest[p.name] === undefined) continue;
            query.set(p.name, String(rest[p.name]));
            delete rest[p.name];
          }
          const url = `${base}${basePath}${target}${query.size ? `?${query}` : ""}`;
          const answer = await request(url, { method: method.toUpperCase(), key, body: operation.requestBody ? rest : undefined });
          // As tests/helpers/api.ts's call(): every /api/v1 answer must be one its document describes.
          if (surface === "api" && process.env.API_CONTRACT_CHECK !== "0") {
            const mismatch = contractMismatch(method.toUpperCase(), target, answer.status, answer.text ? JSON.parse(answer.text) : undefined);
            if (mismatch) throw new Error(`the API contradicts its OpenAPI document: ${mismatch}`);
          }
          return answer;
        },
      });
    }
  }
  return operations;
}

export type Served = { apiDocument: Schema; agentDocument: Schema; catalog: Schema[]; mcpTools: Schema[] };

/** What the server serves about its operations. `key` reads the catalog and MCP's tools/list (both need a key). */
export async function readServed(base: string, key: string): Promise<Served> {
  const json = async (answer: Promise<Answer>, what: string) => {
    const res = await answer;
    if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${res.text}`);
    return JSON.parse(res.text);
  };
  const apiDocument = await json(request(`${base}/api/v1/openapi.json`, { method: "GET", key: null }), "/api/v1/openapi.json");
  const agentDocument = await json(request(`${base}/api/agent/v1/openapi.json`, { method: "GET", key: null }), "/api/agent/v1/openapi.json");
  const catalog = (await json(request(`${base}/api/agent/v1/tools?format=detailed`, { method: "GET", key }), "/api/agent/v1/tools")).data;
  const listed = await json(mcp(base, key, "tools/list", {}), "MCP tools/list");
  if (!listed.result) throw new Error(`MCP tools/list failed: ${JSON.stringify(listed)}`);
  return { apiDocument, agentDocument, catalog, mcpTools: listed.result.tools };
}

/** One JSON-RPC request to the MCP endpoint (stateless: no initialize needed). */
function mcp(base: string, key: string | null, method: string, params: unknown): Promise<Answer> {
  return request(`${base}/api/agent/mcp`, {
    method: "POST",
    key,
    body: { jsonrpc: "2.0", id: 1, method, params },
    headers: { accept: "application/json, text/event-stream" },
  });
}

/** Every operation of the three surfaces. */
export function operationsOf(base: string, served: Served): Operation[] {
  const exampleOfTool = (name: string) => served.catalog.find((entry) => entry.name === name)?.example as Record<string, unknown> | undefined;
  const api = documentOperations(
    base,
    "/api/v1",
    "api",
    served.apiDocument,
    (_method, _path, operation) => operation.requestBody?.content?.["application/json"]?.example,
  );
  const agent = documentOperations(base, "/api/agent/v1", "agent", served.agentDocument, (_method, path) => exampleOfTool(path.replace(/^\/tools\//, "")));
  const viaMcp = served.mcpTools.map((tool): Operation => {
    const label = `MCP tools/call ${tool.name}`;
    const rest = agent.find((operation) => operation.label === `POST /api/agent/v1/tools/${tool.name}`);
    const example = exampleOfTool(tool.name);
    const problems: string[] = [];
    if (!rest) problems.push("no POST /api/agent/v1/tools/{name} operation declares its scope");
    if (!example) problems.push("the tool catalog has no example to build a valid call from");
    return {
      label,
      surface: "mcp",
      scopes: rest?.scopes ?? [],
      ids: bodyIds({}, tool.inputSchema, `/tools/${tool.name}`),
      example: example ?? {},
      problems,
      send: (key, values) => mcp(base, key, "tools/call", { name: tool.name, arguments: values }),
    };
  });
  return [...api, ...agent, ...viaMcp];
}

/** An answer as two answers to the same request may differ only in: request id, date, rate-limit counts. */
export function comparable(answer: Answer) {
  const headers = Object.fromEntries(
    Object.entries(answer.headers)
      .filter(([name]) => name !== "x-request-id" && name !== "date")
      .map(([name, value]) => [name, name.startsWith("x-ratelimit-") ? "<count>" : value]),
  );
  return { status: answer.status, body: answer.text, headers };
}
