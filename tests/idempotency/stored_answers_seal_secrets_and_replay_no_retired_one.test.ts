// An Idempotency-Key answer that carries a webhook signing secret (POST /webhook-endpoints and
// /webhook-endpoints/{id}/roll-secret) is stored sealed: no column of the stored row holds the
// secret. A repeat within the 24 hours answers the first answer byte for byte while its secret is
// still the endpoint's; once a roll has replaced it (or the endpoint is gone) the repeat is a 409
// saying so, never the retired secret (as when it can no longer be unsealed: another ENCRYPTION_KEY).
// Answers stored in plain text before (an older release) are not replayed, and the migration takes
// their secret out. In-process, on either database.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { call, errorOf, tenantWithKey } from "../helpers/api";

const previousLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
beforeAll(() => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
});
afterAll(() => {
  if (previousLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = previousLoopback;
});

const MIGRATION = path.resolve(__dirname, "../../prisma/migrations/20261207180000_withhold_stored_secrets/migration.sql");

/** Every column of the tenant's stored answers, as text (the row as JSON): what a database reader sees. */
async function storedRowsText(tenantId: string): Promise<string> {
  const rows = await (await getDb()).$queryRawUnsafe<{ row: string }[]>(
    "SELECT row_to_json(r)::text AS row FROM idempotent_responses r WHERE tenant_id = $1::uuid ORDER BY key",
    tenantId,
  );
  return rows.map((r) => r.row).join("\n");
}

const retired = (idempotencyKey: string, why: string) =>
  errorOf("conflict", `Idempotency-Key "${idempotencyKey}" was first answered with a secret that is no longer in force: ${why}`);
const rolledAway = (id: string) =>
  `webhook endpoint ${id}'s signing secret has since been rolled; roll it again (POST /api/v1/webhook-endpoints/${id}/roll-secret) for a new one`;

describe("stored Idempotency-Key answers that carry a webhook secret", () => {
  let tenantId: string;
  let key: string;
  const post = (p: string, body: unknown, idempotencyKey: string) => call("POST", p, { key, body, headers: { "idempotency-key": idempotencyKey } });

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey(["webhooks:write"]));
  });

  it("are_sealed_replayed_byte_for_byte_while_in_force_and_a_409_once_a_roll_retired_the_secret", async () => {
    const body = { url: "http://127.0.0.1:9/sealed", events: ["lead.created"] };
    const created = await post("/webhook-endpoints", body, "create-1");
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const first: string = created.body.secret;
    expect(first).toMatch(/^whsec_[0-9a-f]{48}$/);
    // Neither the secret nor any part of it after its shown prefix is stored in plain text.
    const rows = await storedRowsText(tenantId);
    expect(rows).toContain('"key":"create-1"');
    expect(rows).not.toContain(first);
    expect(rows).not.toContain(first.slice(12));

    const replay = await post("/webhook-endpoints", body, "create-1");
    expect([replay.status, replay.text, replay.headers.get("content-type"), replay.headers.get("idempotent-replayed")]).toEqual([
      201,
      created.text,
      "application/json",
      "true",
    ]);
    expect((await call("GET", "/webhook-endpoints", { key })).body.data.map((e: { id: string }) => e.id)).toEqual([id]);

    const rolled = await post(`/webhook-endpoints/${id}/roll-secret`, { overlap_seconds: 3600 }, "roll-1");
    expect(rolled.status).toBe(200);
    const second: string = rolled.body.secret;
    expect(second).not.toBe(first);
    const afterRoll = await storedRowsText(tenantId);
    for (const secret of [first, second]) expect(afterRoll).not.toContain(secret.slice(12));

    const rollReplay = await post(`/webhook-endpoints/${id}/roll-secret`, { overlap_seconds: 3600 }, "roll-1");
    expect([rollReplay.status, rollReplay.text, rollReplay.headers.get("idempotent-replayed")]).toEqual([200, rolled.text, "true"]);

    // The first secret still signs during the overlap, but it is retired: the create's repeat does not hand it out.
    const createAgain = await post("/webhook-endpoints", body, "create-1");
    expect([createAgain.status, createAgain.body]).toEqual([409, retired("create-1", rolledAway(id))]);
    expect(createAgain.headers.get("idempotent-replayed")).toBeNull();
    expect(createAgain.text).not.toContain(first.slice(12));

    const third = await post(`/webhook-endpoints/${id}/roll-secret`, {}, "roll-2");
    expect(third.status).toBe(200);
    const rollAgain = await post(`/webhook-endpoints/${id}/roll-secret`, { overlap_seconds: 3600 }, "roll-1");
    expect([rollAgain.status, rollAgain.body]).toEqual([409, retired("roll-1", rolledAway(id))]);
    expect(rollAgain.text).not.toContain(second.slice(12));
    // Nothing ran for the refused repeats: one endpoint, its secret the last roll's.
    expect((await call("GET", `/webhook-endpoints/${id}`, { key })).body.secret_prefix).toBe(third.body.secret.slice(0, 12));

    expect((await call("DELETE", `/webhook-endpoints/${id}`, { key })).status).toBe(200);
    const afterDelete = await post(`/webhook-endpoints/${id}/roll-secret`, {}, "roll-2");
    expect([afterDelete.status, afterDelete.body]).toEqual([409, retired("roll-2", `webhook endpoint ${id} has since been deleted`)]);
    expect(afterDelete.text).not.toContain(third.body.secret.slice(12));
  });

  it("an_answer_stored_in_plain_text_before_is_not_replayed_and_the_migration_takes_its_secret_out", async () => {
    const body = { url: "http://127.0.0.1:9/legacy", events: ["lead.created"] };
    const created = await post("/webhook-endpoints", body, "legacy-1");
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    const db = await getDb();
    // The row as the release before this one wrote it: the answer's JSON text as sent.
    await db.$executeRawUnsafe("UPDATE idempotent_responses SET body = $1 WHERE tenant_id = $2::uuid AND key = 'legacy-1'", created.text, tenantId);

    const repeat = await post("/webhook-endpoints", body, "legacy-1");
    expect([repeat.status, repeat.body]).toEqual([409, retired("legacy-1", "answers stored before their secrets were sealed are no longer replayed")]);
    expect(repeat.text).not.toContain(secret);

    const other = { url: "http://127.0.0.1:9/other", events: ["lead.created"] };
    const sealed = await post("/webhook-endpoints", other, "sealed-1");
    expect(sealed.status).toBe(201);

    await db.$executeRawUnsafe(readFileSync(MIGRATION, "utf8"));
    const [row] = await db.$queryRawUnsafe<{ body: string }[]>(
      "SELECT body FROM idempotent_responses WHERE tenant_id = $1::uuid AND key = 'legacy-1'",
      tenantId,
    );
    expect(JSON.parse(row.body)).toEqual({ ...created.body, secret: null });
    expect(await storedRowsText(tenantId)).not.toContain(secret.slice(12));
    const afterMigration = await post("/webhook-endpoints", body, "legacy-1");
    expect([afterMigration.status, afterMigration.body]).toEqual([
      409,
      retired("legacy-1", "answers stored before their secrets were sealed are no longer replayed"),
    ]);
    // A sealed answer is left as it was.
    const again = await post("/webhook-endpoints", other, "sealed-1");
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([201, sealed.text, "true"]);
  });

  it("an_answer_sealed_under_another_encryption_key_is_a_409_not_a_500", async () => {
    const body = { url: "http://127.0.0.1:9/rekeyed", events: ["lead.created"] };
    const created = await post("/webhook-endpoints", body, "rekeyed-1");
    expect(created.status).toBe(201);
    const saved = process.env.ENCRYPTION_KEY;
    process.env.ENCRYPTION_KEY = "22".repeat(32);
    try {
      const repeat = await post("/webhook-endpoints", body, "rekeyed-1");
      expect([repeat.status, repeat.body]).toEqual([409, retired("rekeyed-1", "the stored answer can no longer be read")]);
    } finally {
      if (saved === undefined) delete process.env.ENCRYPTION_KEY;
      else process.env.ENCRYPTION_KEY = saved;
    }
    const restored = await post("/webhook-endpoints", body, "rekeyed-1");
    expect([restored.status, restored.text]).toEqual([201, created.text]);
  });
});
