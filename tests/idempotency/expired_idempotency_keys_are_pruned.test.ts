// Stored answers live IDEMPOTENCY_KEY_RETENTION_MS (24 h): past it a repeat of the key runs anew
// (even before the pruning job has deleted the row), and the pruning deletes exactly the expired
// rows. The OpenAPI document offers the header on every POST, with its 409.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { getOpenApiDocument } from "../../server/http/openapi";
import { IDEMPOTENCY_KEY_RETENTION_MS, pruneIdempotentResponses } from "../../server/idempotency/idempotency";
import { call, tenantWithKey } from "../helpers/api";

const offering = { title: "Expiring", price: "3.00", price_currency: "USD" };
const post = (key: string, idempotencyKey: string) => call("POST", "/offerings", { key, body: offering, headers: { "idempotency-key": idempotencyKey } });

async function storedKeys(tenantId: string): Promise<string[]> {
  const db = (await openDatabase()).prisma;
  const rows = await db.$queryRawUnsafe<{ key: string }[]>("SELECT key FROM idempotent_responses WHERE tenant_id = $1::uuid ORDER BY key", tenantId);
  return rows.map((r) => r.key);
}

describe("expired Idempotency-Keys", () => {
  it("a_key_past_its_24h_runs_anew_and_pruning_deletes_only_expired_answers", async () => {
    expect(IDEMPOTENCY_KEY_RETENTION_MS).toBe(24 * 3_600_000);
    const { key, tenantId } = await tenantWithKey();
    const first = await post(key, "old");
    expect(first.status).toBe(201);
    expect((await post(key, "fresh")).status).toBe(201);
    const db = (await openDatabase()).prisma;
    await db.$executeRawUnsafe(
      "UPDATE idempotent_responses SET created_at = now() - interval '24 hours 1 second' WHERE tenant_id = $1::uuid AND key = 'old'",
      tenantId,
    );

    const again = await post(key, "old");
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([201, null]);
    expect(again.body.id).not.toBe(first.body.id);
    const replayed = await post(key, "old");
    expect([replayed.status, replayed.text, replayed.headers.get("idempotent-replayed")]).toEqual([201, again.text, "true"]);

    await db.$executeRawUnsafe("UPDATE idempotent_responses SET created_at = now() - interval '25 hours' WHERE tenant_id = $1::uuid AND key = 'old'", tenantId);
    expect(await pruneIdempotentResponses()).toBeGreaterThanOrEqual(1);
    expect(await storedKeys(tenantId)).toEqual(["fresh"]);
  });
});

describe("the OpenAPI document", () => {
  it("every_post_takes_an_optional_idempotency_key_header_and_documents_its_409", () => {
    const doc = getOpenApiDocument() as { paths: Record<string, Record<string, any>> };
    const posts = Object.entries(doc.paths).flatMap(([path, item]) => (item.post ? [[path, item.post] as const] : []));
    expect(posts.length).toBeGreaterThanOrEqual(7);
    for (const [path, operation] of posts) {
      const header = operation.parameters.find((p: { in: string; name: string }) => p.in === "header" && p.name === "Idempotency-Key");
      expect({ path, required: header?.required, maxLength: header?.schema.maxLength }).toEqual({ path, required: false, maxLength: 255 });
      expect(operation.responses["409"].description).toMatch(/Idempotency-Key/);
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))?.[1] as { headers: Record<string, unknown> };
      expect(Object.keys(success.headers)).toContain("Idempotent-Replayed");
    }
    for (const item of Object.values(doc.paths)) {
      for (const method of ["get", "patch", "delete"]) {
        const parameters = (item[method]?.parameters ?? []) as { name: string }[];
        expect(parameters.map((p) => p.name)).not.toContain("Idempotency-Key");
      }
    }
  });
});
