// Issue 13, findings 5 and 6 on leads: a lone surrogate in `attributes` reached PostgreSQL (which
// refuses it in jsonb) and answered 500, and `attributes` had no size limit. Now both are 400s
// naming the field, on create and on a patch (where the merged object is what counts).
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

let key: string;
let tenantId: string;
const bad = (message: string) => errorOf("bad_request", message);
const attributesOf = (bytes: number, name: string) => ({ [name]: "x".repeat(bytes - `{"${name}":""}`.length) });
const createLead = async (body: Record<string, unknown>) =>
  call("POST", "/leads", { key, body: { conversation_id: (await makeConversation(tenantId)).id, ...body } });

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
});

describe("lead input bounds", () => {
  it("400_lone_surrogate_in_attributes_names_the_key", async () => {
    const res = await createLead({ attributes: { budget: "\ud800" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad("invalid field 'attributes.budget': contains an unpaired surrogate (not valid Unicode)"));
    const nested = await createLead({ attributes: { rooms: [{ name: "ok" }, { name: "bad\udfff" }] } });
    expect(nested.body).toEqual(bad("invalid field 'attributes.rooms[1].name': contains an unpaired surrogate (not valid Unicode)"));
    const nul = await createLead({ notes: "a\u0000b" });
    expect(nul.body).toEqual(bad("invalid field 'notes': must not contain NUL characters"));
  });

  it("400_attributes_nested_deeper_than_32_levels", async () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const res = await createLead({ attributes: deep });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad(`invalid field 'attributes${".d".repeat(31)}': nested deeper than 32 levels`));
  });

  it("400_attributes_over_16_kib_on_create_and_on_a_merging_patch", async () => {
    const over = await createLead({ attributes: attributesOf(16_385, "k") });
    expect(over.status).toBe(400);
    expect(over.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 16385)"));

    const created = await createLead({ attributes: attributesOf(9_000, "a") });
    expect(created.status).toBe(201);
    const grown = await call("PATCH", `/leads/${created.body.id}`, { key, body: { attributes: attributesOf(9_000, "b") } });
    expect(grown.status).toBe(400);
    expect(grown.body).toEqual(bad("invalid field 'attributes': must be at most 16 KiB as JSON (16384 bytes; got 17999)"));
    const listed = await call("GET", "/leads?limit=100", { key });
    expect(listed.body.data.find((l: { id: string }) => l.id === created.body.id)).toEqual(created.body);
  });
});
