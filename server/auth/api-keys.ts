// Issuing, listing and revoking API keys (used by the dashboard router and the operator CLI).
import type { Prisma } from "../db/generated/client";
import type { TenantDb } from "../db/tenant-scope";
import { notFound } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { generateApiKey } from "./api-key-format";
import type { Scope } from "./principal";
import { apiKeyResource } from "./api-keys.types";

export type ApiKeyRow = Prisma.ApiKeyGetPayload<object>;

export const apiKeyToWire = (row: ApiKeyRow) => apiKeyResource.toWire(row);

/** Creates a key and returns its plaintext, the only time it exists outside the caller. */
export async function issueApiKey(db: TenantDb, input: { name: string; scopes: Scope[] }, actor: AuditActor) {
  const generated = generateApiKey();
  const scopes = [...new Set(input.scopes)];
  const row = await db.$transaction(async (tx) => {
    const key = await tx.apiKey.create({
      data: {
        name: input.name,
        scopes,
        prefix: generated.prefix,
        last4: generated.last4,
        salt: generated.salt,
        hash: generated.hash,
        createdByUserId: actor.actorType === "user" ? actor.actorId : null,
        tenantId: tx.tenantId,
      },
    });
    await recordAudit(tx, { ...actor, action: "api_key.issued", targetType: "api_key", targetId: key.id, details: { name: input.name, scopes } });
    return key;
  });
  return { key: row, plaintext: generated.plaintext };
}

export async function listApiKeys(db: TenantDb): Promise<ApiKeyRow[]> {
  return db.apiKey.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
}

/** Idempotent: revoking a revoked key changes nothing and writes no audit entry. */
export async function revokeApiKey(db: TenantDb, keyId: string, actor: AuditActor): Promise<ApiKeyRow> {
  return db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { id: keyId } });
    if (!key) throw notFound();
    if (key.revokedAt) return key;
    const revoked = await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    await recordAudit(tx, { ...actor, action: "api_key.revoked", targetType: "api_key", targetId: keyId, details: { name: key.name } });
    return revoked;
  });
}
