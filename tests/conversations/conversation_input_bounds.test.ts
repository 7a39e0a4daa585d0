// Issue 13, findings 5 and 6 on conversations: a lone surrogate in `attributes` answered 500, and
// `attributes` had no size limit. Now both are 400s naming the field, on create and on a patch
// (where the merged object is what counts), and nothing is written.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { makeConversation, uniquePhone } from "../helpers/conversations";

let key: string;
let tenantId: string;
const bad = (message: string) => errorOf("bad_request", message);
const attributesOf = (bytes: number, name: string) => ({ [name]: "x".repeat(bytes - `{"${name}":""}`.length) });
const create = (body: Record<string, unknown>) =>
  call("POST", "/conversations", { key, body: { channel: "sms", customer_identifier: uniquePhone(), ...body } });

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
});

describe("conversation input bounds", () => {
  it("400_lone_surrogate_in_attributes_on_create_and_patch", async () => {
    const res = await create({ attributes: { topic: "\ud83d" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad("invalid field 'attributes.topic': contains an unpaired surrogate (not valid Unicode)"));
    const conversation = await makeConversation(tenantId);
    const patched = await call("PATCH", `/conversations/${conversation.id}`, { key, body: { attributes: { topic: "x\udc00y" } } });
    expect(patched.body).toEqual(bad("invalid field 'attributes.topic': contains an unpaired surrogate (not valid Unicode)"));
  });

  it("400_attributes_over_16_kib_on_create_and_on_a_merging_patch", async () => {
    expect((await create({ attributes: attributesOf(20_000, "k") })).body).toEqual(
      bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 20000)"),
    );
    const created = await create({ attributes: attributesOf(16_300, "a") });
    expect(created.status).toBe(201);
    const grown = await call("PATCH", `/conversations/${created.body.id}`, { key, body: { attributes: { b: "y".repeat(100) } } });
    expect(grown.status).toBe(400);
    expect(grown.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 16407)"));
    const read = await call("GET", `/conversations/${created.body.id}`, { key });
    expect(read.body).toEqual(created.body);
  });
});
