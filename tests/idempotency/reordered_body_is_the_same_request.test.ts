// The Idempotency-Key fingerprint reads the body as JSON, not as the order its members were sent in:
// the same body with its members reordered, at any depth, is the same request (its repeat is the
// replay), while another value, or an array in another order, is another request (409). An answer
// stored with the earlier fingerprint (the body's members hashed in the order sent) still replays.
// In-process, through the real CRM create (its nested `fields`) against a local fake CRM.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { canonicalJson } from "../../server/idempotency/idempotency";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { connectCrm } from "../crm/connect";
import { startFakeCrm, type FakeCrm } from "../crm/fake-crm-server";

const previousLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
let crm: FakeCrm;
let key: string;
let tenantId: string;

beforeAll(async () => {
  // The fake CRM and the webhook URLs are on 127.0.0.1.
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
  crm = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec_7" } });
  ({ tenantId, key } = await tenantWithKey(["crm:write", "webhooks:write", "offerings:write", "read"]));
  await connectCrm(tenantId, { provider: "http", baseUrl: `${crm.url}/api/`, mapping: { name: "full_name", phone: "mobile", budget: "deal_size" } });
});
afterAll(async () => {
  await crm?.close();
  if (previousLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = previousLoopback;
});

const post = (path: string, body: unknown, idempotencyKey: string) => call("POST", path, { key, body, headers: { "idempotency-key": idempotencyKey } });
const usedElsewhere = (idempotencyKey: string) =>
  errorOf(
    "conflict",
    `Idempotency-Key "${idempotencyKey}" was already used with another request (a different endpoint or body); use a new key for a new request`,
  );

describe("the Idempotency-Key fingerprint", () => {
  it("a_body_with_its_members_reordered_at_any_depth_is_replayed_and_another_value_is_409", async () => {
    const sent = crm.received.length;
    const first = await post("/crm/create-record", { object: "contacts", fields: { name: "Sara", phone: "+971501234567", budget: 1500 } }, "reorder-1");
    expect(first.status).toBe(201);
    expect(crm.received.length).toBe(sent + 1);

    const reordered = await post("/crm/create-record", { fields: { budget: 1500, phone: "+971501234567", name: "Sara" }, object: "contacts" }, "reorder-1");
    expect([reordered.status, reordered.text, reordered.headers.get("idempotent-replayed")]).toEqual([201, first.text, "true"]);
    expect(crm.received.length).toBe(sent + 1);

    const changed = await post("/crm/create-record", { fields: { budget: 1501, phone: "+971501234567", name: "Sara" }, object: "contacts" }, "reorder-1");
    expect([changed.status, changed.body]).toEqual([409, usedElsewhere("reorder-1")]);
    expect(crm.received.length).toBe(sent + 1);
  });

  it("an_array_in_another_order_is_another_request", async () => {
    const body = { url: "http://127.0.0.1:9/arrays", events: ["lead.created", "booking.created"], description: "order" };
    const first = await post("/webhook-endpoints", body, "arrays-1");
    expect(first.status).toBe(201);
    const reordered = await post("/webhook-endpoints", { description: "order", events: ["lead.created", "booking.created"], url: body.url }, "arrays-1");
    expect([reordered.status, reordered.text]).toEqual([201, first.text]);
    const swapped = await post("/webhook-endpoints", { ...body, events: ["booking.created", "lead.created"] }, "arrays-1");
    expect([swapped.status, swapped.body]).toEqual([409, usedElsewhere("arrays-1")]);
    const listed = await call("GET", "/webhook-endpoints", { key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([first.body.id]);
  });

  it("an_answer_stored_with_the_earlier_order_sensitive_fingerprint_still_replays_its_exact_repeat", async () => {
    const body = { title: "Stored before", price: "3.00", price_currency: "USD" };
    const first = await post("/offerings", body, "earlier-1");
    expect(first.status).toBe(201);
    // The fingerprint as the release before this one computed it: the router path, then the body as sent.
    const earlier = createHash("sha256").update("offerings.create").update("\n").update(JSON.stringify(body)).digest("hex");
    const db = await getDb();
    const updated = await db.$executeRawUnsafe(
      "UPDATE idempotent_responses SET request_fingerprint = $1 WHERE tenant_id = $2::uuid AND key = 'earlier-1' AND request_fingerprint <> $1",
      earlier,
      tenantId,
    );
    expect(updated).toBe(1);
    const repeat = await post("/offerings", body, "earlier-1");
    expect([repeat.status, repeat.text, repeat.headers.get("idempotent-replayed")]).toEqual([201, first.text, "true"]);
    const other = await post("/offerings", { ...body, title: "Another" }, "earlier-1");
    expect([other.status, other.body]).toEqual([409, usedElsewhere("earlier-1")]);
  });

  it("canonical_json_sorts_members_at_every_depth_and_keeps_arrays_in_order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: { d: [3, { y: 2, z: 1 }], c: null }, b: 1 })).toBe(canonicalJson({ b: 1, a: { c: null, d: [3, { z: 1, y: 2 }] } }));
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });
});
