// Which /api/v1 POSTs answer a secret is read off the OpenAPI document (a member named like a
// credential in the success answer), and each must declare `replayedSecret` in its meta, so that an
// Idempotency-Key stores its answer sealed and never replays a retired secret. A new operation
// answering a secret without it fails here, naming its path.
import { describe, expect, it } from "vitest";
import { getOpenApiDocument } from "../../server/http/openapi";
import { appRouter } from "../../server/http/router";
import { forEachOpenApiProcedureOf } from "../../server/trpc/internals";

const CREDENTIAL_NAMES = new Set(["secret", "token", "password", "plaintext", "api_key", "client_secret", "access_token", "refresh_token"]);

type Schema = { $ref?: string; properties?: Record<string, unknown> };

describe("answers that carry a secret", () => {
  it("every_post_answering_a_secret_declares_replayed_secret", () => {
    const document = getOpenApiDocument() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
      components: { schemas: Record<string, Schema> };
    };
    const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(document.components.schemas[schema.$ref.split("/").at(-1)!]) : schema);
    const carrying: string[] = [];
    const declared: string[] = [];
    forEachOpenApiProcedureOf(appRouter, ({ meta }) => {
      if (meta.openapi.method !== "POST") return;
      const { path } = meta.openapi;
      const answer = document.paths[path].post.responses[String(meta.successStatus ?? 200)];
      const schema = resolve(answer.content!["application/json"].schema);
      if (Object.keys(schema.properties ?? {}).some((name) => CREDENTIAL_NAMES.has(name))) carrying.push(path);
      if (meta.replayedSecret) declared.push(path);
    });
    expect(carrying.sort()).toEqual(["/webhook-endpoints", "/webhook-endpoints/{id}/roll-secret"]);
    expect(declared.sort()).toEqual(carrying);
  });
});
