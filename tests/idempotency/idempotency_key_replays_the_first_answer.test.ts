// `Idempotency-Key` on /api/v1's POSTs, through a real lean front: a repeat with the same key and
// body answers the first answer's bytes (marked Idempotent-Replayed) and changes nothing; another
// body is a 409 naming the key; keys are per API key; a malformed key is a 400 naming the header;
// an error answer is not stored (its retry runs); without the header nothing changes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { newKey, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";

let server: Running;
let key: string;
let otherKey: string;
let otherTenantKey: string;

beforeAll(async () => {
  const tenant = await tenantWithKey();
  key = tenant.key;
  otherKey = (await newKey(tenant.tenantId)).key;
  otherTenantKey = (await tenantWithKey()).key;
  server = await startMount("lean");
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

type Answer = { status: number; text: string; headers: Headers };

async function send(method: string, path: string, opts: { key?: string; body?: unknown; idempotencyKey?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.key ?? key}` };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.idempotencyKey !== undefined) headers["idempotency-key"] = opts.idempotencyKey;
  const res = await fetch(`${server.url}/api/v1${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const offering = (title: string) => ({ title, price: "12.50", price_currency: "USD" });

async function offeringsTitled(title: string, apiKey = key): Promise<string[]> {
  const listed = await send("GET", "/offerings?limit=100", { key: apiKey });
  expect(listed.status).toBe(200);
  return (JSON.parse(listed.text).data as { id: string; title: string }[]).filter((o) => o.title === title).map((o) => o.id);
}

describe("Idempotency-Key on POST /api/v1", () => {
  it("repeat_with_the_same_key_and_body_replays_the_first_201_byte_for_byte_and_creates_once", async () => {
    const first = await send("POST", "/offerings", { body: offering("Replayed"), idempotencyKey: "order-1 retry safe" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const repeats = await Promise.all([1, 2].map(() => send("POST", "/offerings", { body: offering("Replayed"), idempotencyKey: "order-1 retry safe" })));
    for (const repeat of repeats.filter((r) => r.status !== 409)) {
      expect(repeat.status).toBe(201);
      expect(repeat.text).toBe(first.text);
      expect(repeat.headers.get("content-type")).toBe("application/json");
      expect(repeat.headers.get("idempotent-replayed")).toBe("true");
      expect(repeat.headers.get("x-ratelimit-limit")).not.toBeNull();
    }
    const later = await send("POST", "/offerings", { body: offering("Replayed"), idempotencyKey: "order-1 retry safe" });
    expect([later.status, later.text, later.headers.get("idempotent-replayed")]).toEqual([201, first.text, "true"]);
    expect(await offeringsTitled("Replayed")).toEqual([JSON.parse(first.text).id]);
  });

  it("repeat_with_another_body_or_endpoint_is_409_naming_the_key_and_changes_nothing", async () => {
    const first = await send("POST", "/offerings", { body: offering("Original"), idempotencyKey: "k-409" });
    expect(first.status).toBe(201);
    const other = await send("POST", "/offerings", { body: offering("Changed"), idempotencyKey: "k-409" });
    expect(other.status).toBe(409);
    expect(JSON.parse(other.text)).toEqual({
      error: {
        code: "conflict",
        message: 'Idempotency-Key "k-409" was already used with another request (a different endpoint or body); use a new key for a new request',
      },
    });
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    const elsewhere = await send("POST", "/leads", { body: { name: "Ann", email: "ann@example.com" }, idempotencyKey: "k-409" });
    expect(elsewhere.status).toBe(409);
    expect(await offeringsTitled("Changed")).toEqual([]);
    expect(await offeringsTitled("Original")).toEqual([JSON.parse(first.text).id]);
  });

  it("keys_are_per_api_key_and_per_tenant", async () => {
    const mine = await send("POST", "/offerings", { body: offering("Per key"), idempotencyKey: "shared-text" });
    const sibling = await send("POST", "/offerings", { key: otherKey, body: offering("Per key"), idempotencyKey: "shared-text" });
    const stranger = await send("POST", "/offerings", { key: otherTenantKey, body: offering("Per key"), idempotencyKey: "shared-text" });
    expect([mine.status, sibling.status, stranger.status]).toEqual([201, 201, 201]);
    expect(sibling.headers.get("idempotent-replayed")).toBeNull();
    expect(stranger.headers.get("idempotent-replayed")).toBeNull();
    expect(new Set([mine, sibling, stranger].map((a) => JSON.parse(a.text).id)).size).toBe(3);
    expect(await offeringsTitled("Per key")).toHaveLength(2);
    expect(await offeringsTitled("Per key", otherTenantKey)).toHaveLength(1);
  });

  it("malformed_key_is_400_naming_the_header_and_creates_nothing", async () => {
    const message = "invalid header 'Idempotency-Key': must be 1 to 255 printable ASCII characters";
    for (const bad of ["", "x".repeat(256), "tab\there"]) {
      const answer = await send("POST", "/offerings", { body: offering("Malformed key"), idempotencyKey: bad });
      expect([answer.status, JSON.parse(answer.text)]).toEqual([400, { error: { code: "bad_request", message } }]);
    }
    expect((await send("POST", "/offerings", { body: offering("Longest key"), idempotencyKey: "~".repeat(255) })).status).toBe(201);
    expect(await offeringsTitled("Malformed key")).toEqual([]);
    // Authentication still comes first: no key, no look at the header.
    const anonymous = await fetch(`${server.url}/api/v1/offerings`, { method: "POST", headers: { "idempotency-key": "" } });
    expect(anonymous.status).toBe(401);
  });

  it("an_error_answer_is_not_stored_so_the_retry_with_the_same_key_runs", async () => {
    const conversation = await send("POST", "/conversations", { body: { channel: "whatsapp", customer_identifier: "+971 50 123 4567" } });
    expect([conversation.status, conversation.text]).toEqual([201, expect.any(String)]);
    const id = JSON.parse(conversation.text).id;
    expect((await send("PATCH", `/conversations/${id}`, { body: { status: "closed" } })).status).toBe(200);
    const refused = await send("POST", `/conversations/${id}/send`, { body: { body: "Hello" }, idempotencyKey: "send-1" });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text).error.message).toMatch(/conversation is closed/);
    expect((await send("PATCH", `/conversations/${id}`, { body: { status: "open" } })).status).toBe(200);
    const sent = await send("POST", `/conversations/${id}/send`, { body: { body: "Hello" }, idempotencyKey: "send-1" });
    expect(sent.status).toBe(201);
    expect(sent.headers.get("idempotent-replayed")).toBeNull();
    const again = await send("POST", `/conversations/${id}/send`, { body: { body: "Hello" }, idempotencyKey: "send-1" });
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([201, sent.text, "true"]);
    const messages = await send("GET", `/conversations/${id}/messages?limit=100`);
    expect(JSON.parse(messages.text).data.filter((m: { body: string }) => m.body === "Hello")).toHaveLength(1);
  });

  it("a_booking_one_statement_write_is_replayed_too_and_books_once", async () => {
    const booking = {
      customer_name: "Replayed booking",
      customer_phone: "+971501000003",
      scheduled_start: "2026-12-02T09:00:00.000Z",
      scheduled_end: "2026-12-02T10:00:00.000Z",
    };
    const first = await send("POST", "/appointments", { body: booking, idempotencyKey: "booking-1" });
    expect(first.status).toBe(201);
    const again = await send("POST", "/appointments", { body: booking, idempotencyKey: "booking-1" });
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([201, first.text, "true"]);
    const listed = JSON.parse((await send("GET", "/appointments?limit=100")).text).data as { customer_name: string }[];
    expect(listed.filter((a) => a.customer_name === "Replayed booking")).toHaveLength(1);
  });

  it("without_the_header_every_post_runs_as_before", async () => {
    const answers = await Promise.all([1, 2].map(() => send("POST", "/offerings", { body: offering("No key") })));
    expect(answers.map((a) => [a.status, a.headers.get("idempotent-replayed")])).toEqual([
      [201, null],
      [201, null],
    ]);
    expect(await offeringsTitled("No key")).toHaveLength(2);
  });
});
