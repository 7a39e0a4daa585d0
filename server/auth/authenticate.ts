// Authenticates an API request: shape check (no I/O), one indexed lookup by prefix, a constant-time
// hash comparison, and a coalesced last-used write that never blocks the request.
// A procedure whose one write statement confirms the key itself (`keyIsCurrentSql`, book_appointment)
// may skip the lookup: `cachedApiKey` answers from this process's memory of keys it looked up, the
// same hash comparison, and the statement stores nothing unless the key is still unrevoked and its
// tenant unsuspended (else `StaleKeyError`: the key is looked up again, and a revoked one is a 401).
import { AppError, MESSAGES, tenantSuspended } from "../lib/errors";
import { getDb, getReadSql, readSqlIfOpen } from "../db/client";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { log } from "../lib/log";
import { LOOKUP_PREFIX_LENGTH, parseBearerToken, verifySecret } from "./api-key-format";

export type AuthenticatedKey = { id: string; tenantId: string; scopes: string[] };

type KeyRow = { id: string; tenant_id: string; scopes: string[]; salt: string; hash: string; revoked: boolean; suspended: boolean };
// Every API request runs it: a prepared statement on the unique prefix index, not a Prisma query.
// Its column names come from the model (server/db/columns.ts).
// The tenant's suspension rides on the same statement (its primary key, no second round trip).
const KEY = modelColumns(Prisma.ApiKeyScalarFieldEnum);
const TENANT = modelColumns(Prisma.TenantScalarFieldEnum);
const KEY_BY_PREFIX = {
  text: `SELECT k.${KEY.id} AS id, k.${KEY.tenantId} AS tenant_id, k.${KEY.scopes} AS scopes, k.${KEY.salt} AS salt, k.${KEY.hash} AS hash,
  k.${KEY.revokedAt} IS NOT NULL AS revoked, t.${TENANT.suspendedAt} IS NOT NULL AS suspended
  FROM ${TABLE.ApiKey} k JOIN ${TABLE.Tenant} t ON t.${TENANT.id} = k.${KEY.tenantId} WHERE k.${KEY.prefix} = $1`,
};

/** The key a request carries, or a 401 (logged with the request's id: see server/lib/log.ts). */
export async function authenticateApiKey(header: string | null): Promise<AuthenticatedKey> {
  const token = parseBearerToken(header);
  if (!token) {
    log.info({ reason: "malformed" }, "api auth refused");
    throw new AppError("unauthorized", MESSAGES.malformedAuth);
  }
  // Revocation must apply on the next request, so this is read from the database every time.
  const sql = readSqlIfOpen() ?? (await getReadSql()); // no await when open: the lookup is sent before this returns
  const [key] = await sql<KeyRow>(KEY_BY_PREFIX, [token.slice(0, LOOKUP_PREFIX_LENGTH)]);
  if (!key || key.revoked || !verifySecret(token, key.salt, key.hash)) {
    log.info({ reason: key?.revoked ? "revoked" : "unknown" }, "api auth refused");
    throw new AppError("unauthorized", MESSAGES.unknownKey);
  }
  if (key.suspended) {
    log.info({ reason: "tenant suspended", tenant_id: key.tenant_id }, "api auth refused");
    throw tenantSuspended();
  }
  rememberKey(token, key);
  touchLastUsed(key.id);
  return { id: key.id, tenantId: key.tenant_id, scopes: key.scopes };
}

// ---------- keys confirmed by the write statement ----------

/** Keys this process found valid, by lookup prefix (salt and hash only: the secret is never kept). Bounded. */
const knownKeys = new Map<string, KeyRow>();
const KNOWN_KEYS_MAX = 10_000;

function rememberKey(token: string, key: KeyRow): void {
  if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.clear();
  knownKeys.set(token.slice(0, LOOKUP_PREFIX_LENGTH), key);
}

/**
 * The key a request carries, from memory, or null (unknown here, or the secret does not match: the
 * caller then looks it up). Only for a procedure whose write confirms the key (`keyIsCurrentSql`):
 * a key revoked since, or of a tenant suspended since, must be refused by that statement.
 */
export function cachedApiKey(header: string | null): AuthenticatedKey | null {
  const token = parseBearerToken(header);
  const key = token ? knownKeys.get(token.slice(0, LOOKUP_PREFIX_LENGTH)) : undefined;
  if (!token || !key || !verifySecret(token, key.salt, key.hash)) return null;
  touchLastUsed(key.id);
  return { id: key.id, tenantId: key.tenant_id, scopes: key.scopes };
}

/** The statement found the remembered key revoked or its tenant suspended: forget it. */
export function forgetCachedApiKey(keyId: string): void {
  for (const [prefix, key] of knownKeys) if (key.id === keyId) knownKeys.delete(prefix);
}

/** A write that confirms the caller's key (`keyIsCurrentSql`) found it revoked, or its tenant suspended: nothing was stored. */
export class StaleKeyError extends Error {
  constructor() {
    super("the API key was revoked or its tenant suspended since this process looked it up");
  }
}

/**
 * THE condition a write statement checks to confirm a remembered key (SQL parameters `keyId`, a
 * uuid or NULL for a key looked up by this request, and `tenantId`): not revoked, its tenant not
 * suspended; the same rules as the lookup.
 */
export function keyIsCurrentSql(keyId: string, tenantId: string): string {
  return `(${keyId} IS NULL OR EXISTS (SELECT 1 FROM ${TABLE.ApiKey} k JOIN ${TABLE.Tenant} t ON t.${TENANT.id} = k.${KEY.tenantId}
    WHERE k.${KEY.id} = ${keyId} AND k.${KEY.tenantId} = ${tenantId} AND k.${KEY.revokedAt} IS NULL AND t.${TENANT.suspendedAt} IS NULL))`;
}

// Last-used is written at most once per key per minute per process, and the conditional update
// keeps several processes from writing more than that between them.
const LAST_USED_INTERVAL_MS = 60_000;
const lastWritten = new Map<string, number>();

function touchLastUsed(keyId: string): void {
  const now = Date.now();
  if (now - (lastWritten.get(keyId) ?? 0) < LAST_USED_INTERVAL_MS) return;
  lastWritten.set(keyId, now);
  if (lastWritten.size > 100_000) lastWritten.clear();
  const write = getDb()
    .then((db) =>
      db.apiKey.updateMany({
        where: { id: keyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now - LAST_USED_INTERVAL_MS) } }] },
        data: { lastUsedAt: new Date(now) },
      }),
    )
    .catch((err) => log.warn({ key_id: keyId, error: err }, "last-used update failed"))
    .finally(() => writesInFlight.delete(write));
  writesInFlight.add(write);
}
const writesInFlight = new Set<Promise<unknown>>();

/** For tests: forget coalescing state so the next use writes. */
export const resetLastUsedCoalescing = () => lastWritten.clear();
/** For tests: resolves once every last-used write started so far has landed (or failed). */
export const lastUsedWritesSettled = async () => {
  await Promise.all(writesInFlight);
};
