// Issue 13, findings 1 (batch part), 5 and 6 on the dashboard's /api/trpc, over real HTTP through the
// lean front with a signed-in owner: a 50 MiB body was buffered (about 185 MB of memory), a batch of
// 600 calls ran them all, a mutation sent as GET or with `Content-Type: text/plain` answered 500, and
// NUL characters, lone surrogates and deep nesting reached the procedures (the NUL check was REST-only).
// Now: over 1 MiB is a 413, more than 20 calls a 400 before any call runs, a wrong method a 405, a
// non-JSON body a 400 — each in the error envelope — and bad input a 400 naming the field.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { MAX_TRPC_BATCH } from "../../server/http/trpc-handler";
import { newTenant } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { SIGN_IN_ENV, signInOverHttp, trpcErrorOf, trpcOverHttp } from "../dashboard/http-session";

let mount: Running;
let cookie: string;

const envelope = (code: string, message: string) => ({ error: { code, message } });
const TOO_LARGE = envelope("bad_request", "request body exceeds 1 MiB");

async function send(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(`${mount.url}/api/trpc/${path}`, {
    ...init,
    headers: { cookie, origin: mount.url, ...init.headers },
  } as RequestInit);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

const offeringInput = (extra: Record<string, unknown> = {}) => ({ title: "Villa", price: 1, price_currency: "USD", ...extra });
/** How many offerings the tenant has (to prove a refused request created none). */
const offeringCount = async () => (await trpcOverHttp(mount.url, cookie, "query", "offerings.list", { limit: 100 })).body.result.data.data.length;

/** The server process's peak resident memory (VmHWM), in bytes. */
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${mount.proc.pid}/status`, "utf8"))![1]) * 1024;

beforeAll(async () => {
  const ownerEmail = await userInTenant((await newTenant("tRPC bounds")).id, "owner");
  mount = await startMount("lean", SIGN_IN_ENV);
  cookie = await signInOverHttp(mount.url, ownerEmail);
});
afterAll(async () => mount?.stop());

describe("/api/trpc request bounds", () => {
  it("413_a_declared_body_over_1_mib_before_reading_it", async () => {
    const body = JSON.stringify(offeringInput({ description: "x".repeat(1024 * 1024) }));
    const res = await send("offerings.create", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(TOO_LARGE);
    expect(await offeringCount()).toBe(0);
  });

  it("413_a_50_mib_chunked_body_is_cut_off_at_1_mib_not_buffered", async () => {
    const before = peakRss();
    const chunk = new Uint8Array(64 * 1024).fill(0x20); // spaces: valid JSON whitespace, if it were ever parsed
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 50 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await send("offerings.create", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit & { headers: Record<string, string> });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(TOO_LARGE);
    // A buffered 50 MiB body (and its string) would lift the peak by well over 50 MiB.
    expect(peakRss() - before).toBeLessThan(40 * 1024 * 1024);
    // The connection is still usable afterwards.
    expect(await offeringCount()).toBe(0);
  });

  it("400_a_batch_of_more_than_20_calls_runs_none_of_them", async () => {
    expect(MAX_TRPC_BATCH).toBe(20);
    const batch = (n: number) => {
      const paths = Array.from({ length: n }, () => "offerings.create").join(",");
      const inputs = Object.fromEntries(Array.from({ length: n }, (_, i) => [i, offeringInput({ title: `Batched ${i}` })]));
      return send(`${paths}?batch=1`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(inputs) });
    };
    for (const n of [21, 600]) {
      const res = await batch(n);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope("bad_request", `a batch holds at most 20 calls (got ${n})`));
    }
    expect(await offeringCount()).toBe(0);
    // Queries too, sent as GET.
    const reads = Array.from({ length: 21 }, () => "offerings.list").join(",");
    const readInputs = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [i, {}]))));
    const refusedReads = await send(`${reads}?batch=1&input=${readInputs}`);
    expect(refusedReads).toMatchObject({ status: 400, body: envelope("bad_request", "a batch holds at most 20 calls (got 21)") });
    // Twenty is a batch like any other.
    const twenty = await batch(20);
    expect(twenty.status).toBe(200);
    expect(twenty.body).toHaveLength(20);
    expect(await offeringCount()).toBe(20);
  });

  it("405_a_mutation_sent_as_get_and_a_query_sent_as_post", async () => {
    const input = encodeURIComponent(JSON.stringify(offeringInput()));
    const get = await send(`offerings.create?input=${input}`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(get.body).toEqual(envelope("bad_request", "'offerings.create' is a mutation: send it as POST, not GET"));
    const post = await send("offerings.list", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(post.status).toBe(405);
    expect(post.body).toEqual(envelope("bad_request", "'offerings.list' is a query: send it as GET, not POST"));
    const put = await send("offerings.create", { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST");
    expect(put.body).toEqual(envelope("bad_request", "method PUT is not allowed here (queries are GET, mutations POST)"));
  });

  it("400_a_mutation_whose_body_is_not_json", async () => {
    const body = JSON.stringify(offeringInput());
    for (const [contentType, shown] of [
      ["text/plain", "'text/plain'"],
      ["text/plain;charset=UTF-8", "'text/plain;charset=UTF-8'"],
      ["application/x-www-form-urlencoded", "'application/x-www-form-urlencoded'"],
      ["multipart/form-data; boundary=x", "'multipart/form-data; boundary=x'"],
      ["application/octet-stream", "'application/octet-stream'"],
    ]) {
      const res = await send("offerings.create", { method: "POST", headers: { "content-type": contentType }, body });
      expect({ contentType, status: res.status, body: res.body }).toEqual({
        contentType,
        status: 400,
        body: envelope("bad_request", `content-type must be application/json (got ${shown})`),
      });
    }
    const malformed = await send("offerings.create", { method: "POST", headers: { "content-type": "application/json" }, body: '{"title":' });
    expect(malformed).toMatchObject({ status: 400, body: envelope("bad_request", "request body is not valid JSON") });
    expect(await offeringCount()).toBe(20);
  });

  it("403_an_untrusted_origin_is_still_refused_first", async () => {
    const res = await fetch(`${mount.url}/api/trpc/offerings.create`, {
      method: "POST",
      headers: { cookie, origin: "https://evil.example", "content-type": "text/plain" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(envelope("forbidden", "untrusted origin"));
  });

  it("400_nul_lone_surrogate_and_deep_nesting_through_trpc_name_the_field", async () => {
    const nul = await trpcOverHttp(mount.url, cookie, "mutation", "offerings.create", offeringInput({ title: "Villa\u0000" }));
    expect(trpcErrorOf(nul)).toEqual({ status: 400, code: "bad_request", message: "invalid field 'title': must not contain NUL characters" });
    expect(nul.body.error.data.field).toBe("title");
    const lone = await trpcOverHttp(mount.url, cookie, "mutation", "offerings.create", offeringInput({ attributes: { k: "\ud800" } }));
    expect(trpcErrorOf(lone)).toEqual({
      status: 400,
      code: "bad_request",
      message: "invalid field 'attributes.k': contains an unpaired surrogate (not valid Unicode)",
    });
    // 100,000 levels deep, written as text (JSON.stringify itself would overflow the stack).
    const text = `{"title":"Villa","price":1,"price_currency":"USD","attributes":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}`;
    const res = await send("offerings.create", { method: "POST", headers: { "content-type": "application/json" }, body: text });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`invalid field 'attributes${".a".repeat(31)}': nested deeper than 32 levels`);
    expect(res.body.error.data).toMatchObject({ appCode: "bad_request", httpStatus: 400 });
    expect(mount.output()).not.toMatch(/RangeError|Maximum call stack|trpc error/);
    expect(await offeringCount()).toBe(20);
  });
});
