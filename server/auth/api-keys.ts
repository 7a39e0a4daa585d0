// Issuing, listing and revoking API keys (used by the dashboard router and the operator CLI).
import type { TenantDb } from "../db/tenant-scope";
import { notFound } from "../shared/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { generateApiKey } from "./api-key-format";
import type { Scope } from "./principal";

export type ApiKeyRow = {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  tenantId: string;
};

export const apiKeyToWire = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  last4: k.last4,
  scopes: k.scopes,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

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
  return { key: row as ApiKeyRow, plaintext: generated.plaintext };
}

export async function listApiKeys(db: TenantDb): Promise<ApiKeyRow[]> {
  return (await db.apiKey.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }] })) as ApiKeyRow[];
}

/** Idempotent: revoking a revoked key changes nothing and writes no audit entry. */
export async function revokeApiKey(db: TenantDb, keyId: string, actor: AuditActor): Promise<ApiKeyRow> {
  return db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { id: keyId } });
    if (!key) throw notFound();
    if (key.revokedAt) return key as ApiKeyRow;
    const revoked = await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    await recordAudit(tx, { ...actor, action: "api_key.revoked", targetType: "api_key", targetId: keyId, details: { name: key.name } });
    return revoked as ApiKeyRow;
  });
}
