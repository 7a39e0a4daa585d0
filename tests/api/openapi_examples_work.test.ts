// Every operation in the OpenAPI document carries a request and a response example, and they are
// true: each response example matches the documented schema, each event example matches its
// webhook schema and the event catalog, and each request example, sent to the server (in-process, or
// the running mount under API_BASE_URL), gets the documented success status.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATION_EXAMPLES } from "../../server/http/openapi";
import { EVENT_PAYLOADS, EVENT_TYPES, eventEnvelopeSchema } from "../../server/events/catalog";
import { exampleEnvelope } from "../../server/events/examples";
import { call, tenantWithKey } from "../helpers/api";
import { matchesDocumentSchema } from "../helpers/openapi-contract";
import { connectCrm } from "../crm/connect";
import { startFakeCrm, type FakeCrm } from "../crm/fake-crm-server";

const document = async () => (await call("GET", "/openapi.json")).body;
const operationsOf = (doc: any) =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op })),
  );
const successStatusOf = (op: any) => Object.keys(op.responses).find((s) => s.startsWith("2"))!;
const escapePointer = (p: string) => p.replace(/~/g, "~0").replace(/\//g, "~1");

describe("OpenAPI examples", () => {
  it("every_operation_has_a_request_and_a_response_example", async () => {
    const doc = await document();
    for (const { key, op } of operationsOf(doc)) {
      expect(OPERATION_EXAMPLES[key], key).toBeDefined();
      const success = op.responses[successStatusOf(op)];
      expect(success.content["application/json"].example, `${key} response example`).toBeDefined();
      if (op.requestBody) expect(op.requestBody.content["application/json"].example, `${key} request example`).toBeDefined();
      for (const p of op.parameters ?? []) if (p.required) expect(p.example, `${key} parameter ${p.name}`).toBeDefined();
      if (!op.requestBody && !(op.parameters ?? []).length) throw new Error(`${key} has no input to exemplify`);
      expect(op.requestBody || (op.parameters ?? []).some((p: any) => p.example !== undefined), `${key} request example`).toBeTruthy();
    }
    expect(Object.keys(OPERATION_EXAMPLES).sort()).toEqual(
      operationsOf(doc)
        .map((o) => o.key)
        .sort(),
    );
  });

  it("every_response_example_matches_its_documented_schema", async () => {
    const doc = await document();
    for (const { key, path, method, op } of operationsOf(doc)) {
      const status = successStatusOf(op);
      const pointer = `/paths/${escapePointer(path)}/${method}/responses/${status}/content/application~1json/schema`;
      expect(matchesDocumentSchema(pointer, op.responses[status].content["application/json"].example), key).toBeNull();
    }
  });

  it("every_event_is_a_webhook_whose_example_matches_its_schema_and_the_catalog", async () => {
    const doc = await document();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const media = doc.webhooks[type].post.requestBody.content["application/json"];
      expect(media.example).toEqual(exampleEnvelope(type));
      expect(matchesDocumentSchema(`/webhooks/${escapePointer(type)}/post/requestBody/content/application~1json/schema`, media.example), type).toBeNull();
      // What emitEvent itself would accept for this event.
      expect(eventEnvelopeSchema.safeParse(media.example).success, type).toBe(true);
      expect(EVENT_PAYLOADS[type].safeParse(media.example.data).success, type).toBe(true);
    }
  });

  describe("request examples sent to the server", () => {
    let crm: FakeCrm;
    const previousLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
    beforeAll(async () => {
      process.env.WEBHOOK_ALLOW_LOOPBACK = "1"; // the fake CRM listens on 127.0.0.1
      crm = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec_20931" } });
    });
    afterAll(async () => {
      if (previousLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
      else process.env.WEBHOOK_ALLOW_LOOPBACK = previousLoopback;
      await crm.close();
    });

    it("every_request_example_gets_the_documented_success_status", async () => {
      const doc = await document();
      const { tenantId, key } = await tenantWithKey();
      await connectCrm(tenantId, { provider: "http", baseUrl: crm.url, mapping: { first_name: "firstname", last_name: "lastname", phone: "phone" } });
      // The examples' ids name rows of the example's world: create this tenant's own and use theirs.
      const created = async (path: string) => {
        const example = OPERATION_EXAMPLES[`POST ${path}`]!;
        const res = await call("POST", path, { key, body: example.body });
        expect(res.status, `POST ${path}`).toBe(201);
        return res.body.id as string;
      };
      const conversationId = await created("/conversations");
      const ids: Record<string, string> = {
        "/offerings/{id}": await created("/offerings"),
        "/appointments/{id}": await created("/appointments"),
        "/conversations/{id}": conversationId,
        "/conversations/{id}/send": conversationId,
        "/conversations/{id}/messages": conversationId,
        "/conversations/{id}/calls": conversationId,
      };
      const leadExample = OPERATION_EXAMPLES["POST /leads"]!;
      const lead = await call("POST", "/leads", { key, body: { ...leadExample.body, conversation_id: conversationId } });
      expect(lead.status).toBe(201);
      ids["/leads/{id}"] = ids["/leads/{id}/handoff"] = lead.body.id;
      // The documented endpoint URL does not resolve here: this tenant's endpoints point at loopback (allowed above), where nothing listens.
      const hookUrl = () => `http://127.0.0.1:9/examples-${randomUUID()}`;
      const endpoint = async () => {
        const res = await call("POST", "/webhook-endpoints", { key, body: { ...OPERATION_EXAMPLES["POST /webhook-endpoints"]!.body, url: hookUrl() } });
        expect(res.status, `POST /webhook-endpoints: ${res.text}`).toBe(201);
        return res.body.id as string;
      };
      // One endpoint for the reads and the DELETE, another to roll (the DELETE may come first).
      ids["/webhook-endpoints/{id}"] = await endpoint();
      ids["/webhook-endpoints/{id}/roll-secret"] = await endpoint();

      for (const { key: name, path, method, op } of operationsOf(doc)) {
        const example = OPERATION_EXAMPLES[name]!;
        const target = path.replace("{id}", ids[path] ?? "");
        const query = new URLSearchParams(Object.entries(example.query ?? {}).map(([k, v]) => [k, String(v)])).toString();
        let body = example.body;
        if (body && "conversation_id" in body) body = { ...body, conversation_id: conversationId };
        if (body && path.startsWith("/webhook-endpoints") && "url" in body) body = { ...body, url: hookUrl() };
        const res = await call(method.toUpperCase(), `${target}${query ? `?${query}` : ""}`, { key, body });
        // A documented success: POST /conversations with the example's pair (created above) answers its documented 200.
        const successes = Object.keys(op.responses).filter((s) => s.startsWith("2"));
        expect(successes, `${name} answered ${res.status}: ${res.text}`).toContain(String(res.status));
        if (name === "POST /conversations") expect(res.status).toBe(200);
      }
      expect(crm.received).toHaveLength(1);
    }, 180_000); // a few dozen requests; a loaded CI machine can take a while
  });
});
