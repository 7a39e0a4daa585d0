// The lean front and `next start` mount the same shared handlers, so a set of contract requests
// (successes, each kind of 400, 401, 404, 413, the OpenAPI document) gets byte-identical answers
// from both: status, body and the headers the contract defines.
import { get } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { call, tenantWithKey } from "../helpers/api";
import { requireNextBuild, startMount, type MountKind } from "../helpers/http-mounts";

requireNextBuild();

/** `authTwice`: the Authorization header on two lines (joined, "a, b", a mount would read it as malformed; node's parsed headers keep the first). */
type Contract = { name: string; method: string; path: string; auth?: string | null; authTwice?: boolean; contentType?: string; body?: string };
type Answer = { status: number; body: string; headers: Record<string, string | null> };

const CONTRACT_HEADERS = ["content-type", "location", "x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining"];
const WELL_FORMED_UNKNOWN_KEY = `xapk_live_${"0".repeat(48)}`;

function contractRequests(key: string, cursor: string): Contract[] {
  const json = "application/json";
  return [
    { name: "first page", method: "GET", path: "/offerings?limit=2", auth: key },
    { name: "next page by cursor", method: "GET", path: `/offerings?limit=2&cursor=${cursor}`, auth: key },
    { name: "appointments list", method: "GET", path: "/appointments?limit=1", auth: key },
    { name: "limit below 1", method: "GET", path: "/offerings?limit=0", auth: key },
    { name: "limit not a number", method: "GET", path: "/offerings?limit=abc", auth: key },
    { name: "malformed cursor", method: "GET", path: "/offerings?cursor=not-a-uuid", auth: key },
    { name: "no Authorization", method: "GET", path: "/offerings", auth: null },
    { name: "malformed key", method: "GET", path: "/offerings", auth: "nope" },
    { name: "unknown key", method: "GET", path: "/offerings", auth: WELL_FORMED_UNKNOWN_KEY },
    { name: "Authorization given twice", method: "GET", path: "/offerings?limit=1", auth: key, authTwice: true },
    { name: "unknown path", method: "GET", path: "/nothing-here", auth: key },
    { name: "the API root", method: "GET", path: "", auth: key },
    { name: "method the path lacks", method: "DELETE", path: "/offerings", auth: key },
    { name: "malformed JSON", method: "POST", path: "/offerings", auth: key, contentType: json, body: "{" },
    { name: "wrong content type", method: "POST", path: "/offerings", auth: key, contentType: "text/plain", body: "{}" },
    { name: "non-object body", method: "POST", path: "/offerings", auth: key, contentType: json, body: "[]" },
    { name: "missing body", method: "POST", path: "/offerings", auth: key, contentType: json, body: "" },
    {
      name: "unknown field",
      method: "POST",
      path: "/offerings",
      auth: key,
      contentType: json,
      body: JSON.stringify({ title: "T", price: 1, price_currency: "USD", colour: "red" }),
    },
    { name: "missing field", method: "POST", path: "/offerings", auth: key, contentType: json, body: JSON.stringify({ price: 1, price_currency: "USD" }) },
    { name: "body over 1 MiB", method: "POST", path: "/offerings", auth: key, contentType: json, body: JSON.stringify({ title: "x".repeat(1024 * 1024 + 1) }) },
    {
      name: "update a missing row",
      method: "PATCH",
      path: "/offerings/9b2f0c57-3a4e-4f6e-9d57-1a1f3c1f0a11",
      auth: key,
      contentType: json,
      body: JSON.stringify({ title: "x" }),
    },
    { name: "OpenAPI document", method: "GET", path: "/openapi.json" },
    { name: "trailing slash", method: "GET", path: "/offerings/", auth: key },
  ];
}

/** A GET with the Authorization header on two lines (fetch would merge them into one). */
function askWithAuthTwice(baseUrl: string, c: Contract, index: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // Raw headers (two Authorization lines); in this form node adds no Host header of its own.
    const headers = [
      "host",
      new URL(baseUrl).host,
      "x-request-id",
      `contract-${index}`,
      "authorization",
      `Bearer ${c.auth}`,
      "authorization",
      `Bearer ${c.auth}`,
    ];
    get(`${baseUrl}/api/v1${c.path}`, { headers }, (res) => {
      let body = "";
      res
        .setEncoding("utf8")
        .on("data", (chunk) => (body += chunk))
        .on("error", reject);
      res.on("end", () => {
        const header = (h: string) => (res.headers[h] === undefined ? null : String(res.headers[h]));
        resolve({ status: res.statusCode!, body, headers: Object.fromEntries(CONTRACT_HEADERS.map((h) => [h, header(h)])) });
      });
    }).on("error", reject);
  });
}

async function ask(baseUrl: string, c: Contract, index: number): Promise<Answer> {
  if (c.authTwice) return askWithAuthTwice(baseUrl, c, index);
  const headers: Record<string, string> = { "x-request-id": `contract-${index}` };
  if (c.auth) headers.authorization = `Bearer ${c.auth}`;
  if (c.contentType) headers["content-type"] = c.contentType;
  const res = await fetch(`${baseUrl}/api/v1${c.path}`, { method: c.method, headers, body: c.body, redirect: "manual" });
  return {
    status: res.status,
    body: await res.text(),
    headers: Object.fromEntries(CONTRACT_HEADERS.map((h) => [h, res.headers.get(h)])),
  };
}

describe("both mounts answer identically (needs `next build`)", () => {
  const answers: Partial<Record<MountKind, Answer[]>> = {};
  const inngestAnswers: Partial<Record<MountKind, { status: number; framework: string | null; body: unknown }>> = {};
  let requests: Contract[];

  beforeAll(async () => {
    const { key } = await tenantWithKey();
    for (const title of ["First", "Second", "Third"]) {
      expect((await call("POST", "/offerings", { key, body: { title, price: "12.50", price_currency: "EUR", attributes: { rooms: 2 } } })).status).toBe(201);
    }
    const page = await call("GET", "/offerings?limit=1", { key });
    requests = contractRequests(key, page.body.next_cursor);

    // One mount at a time: on the embedded database only one process may hold it.
    for (const kind of ["lean", "next"] as const) {
      let server: Running | undefined;
      try {
        // Each mount counts in its own in-process limiter, so both start from the same bucket
        // (a shared Redis would carry the first mount's counts into the second's headers).
        // INNGEST_DEV lets /api/inngest answer its introspection without a signing key; no engine
        // runs (WEBHOOK_ENGINE=off), so nothing tries to reach an Inngest server.
        // An hour-long window: a sliding window that rolled over mid-run would weigh the
        // previous window's count and make one mount's X-RateLimit-Remaining differ by one.
        server = await startMount(kind, {
          REDIS_URL: undefined,
          UPSTASH_REDIS_REST_URL: undefined,
          UPSTASH_REDIS_REST_TOKEN: undefined,
          INNGEST_DEV: "1",
          WEBHOOK_ENGINE: "off",
          RATE_LIMIT_WINDOW_SECONDS: "3600",
        });
        const list: Answer[] = [];
        for (const [i, c] of requests.entries()) list.push(await ask(server.url, c, i));
        answers[kind] = list;
        const inngest = await fetch(`${server.url}/api/inngest`);
        inngestAnswers[kind] = { status: inngest.status, framework: inngest.headers.get("x-inngest-framework"), body: await inngest.json() };
      } finally {
        await server?.stop();
      }
    }
  }, 300_000);

  it("gives the same status, body and contract headers for every request", () => {
    const table = (kind: MountKind) => requests.map((c, i) => ({ request: `${c.method} /api/v1${c.path.slice(0, 60)} (${c.name})`, ...answers[kind]![i] }));
    expect(table("lean")).toEqual(table("next"));
  });

  it("answers /api/inngest with the same Inngest handler on both", () => {
    expect(inngestAnswers.lean).toEqual(inngestAnswers.next);
    expect(inngestAnswers.lean).toMatchObject({ status: 200, framework: "edge", body: { function_count: 4, mode: "dev" } }); // webhook delivery, its failure handler, the handoff SLA cron and the retention purge
  });

  it("answers the contract itself on both (spot checks of the recorded answers)", () => {
    const byName = (name: string) => answers.lean![requests.findIndex((c) => c.name === name)];
    expect(byName("first page").status).toBe(200);
    expect(JSON.parse(byName("first page").body).data.map((o: { title: string }) => o.title)).toEqual(["Third", "Second"]);
    expect(byName("first page").headers["x-request-id"]).toBe("contract-0");
    expect(byName("no Authorization").status).toBe(401);
    expect(byName("unknown path").status).toBe(404);
    // Both read a repeated Authorization as node parses it: the first line counts.
    expect(byName("Authorization given twice").status).toBe(200);
    expect(byName("body over 1 MiB").status).toBe(413);
    expect(byName("OpenAPI document").status).toBe(200);
    expect(JSON.parse(byName("OpenAPI document").body).openapi).toBe("3.1.0");
    expect(byName("trailing slash")).toMatchObject({ status: 308, headers: { location: "/api/v1/offerings" } });
  });
});
