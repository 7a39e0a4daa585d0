// `Idempotency-Key` on /api/v1's POSTs (docs/contract.md): a client that did not get an answer
// (a timeout, a 503, a reset connection) sends the request again with the same key and gets the
// first answer instead of a second change.
//
// The request runs in ONE transaction that also stores its answer (status and JSON text) under
// (tenant, API key, key): the change and its stored answer commit together or not at all, so an
// unknown outcome (the database paused at COMMIT, the answer lost on the way) is resolved by the
// retry: either the first committed and its answer is replayed, or nothing happened and the retry
// runs. A transaction-scoped advisory lock on the key makes a repeat that arrives while the first
// is still running a 409 at once (instead of waiting, then replaying). Only success (2xx) answers
// are stored: an error answer rolled everything back with it, so its retry simply runs again.
//
// Answers are kept for IDEMPOTENCY_KEY_RETENTION_MS (24 h), then pruned hourly by every server
// process (as tool-call records are, server/tools/tool-calls.ts); an expired key runs anew.
//
// An answer that carries a secret (a webhook endpoint's signing secret: the procedure's meta names a
// `replayedSecret` check) is stored sealed with the secret box (ENCRYPTION_KEY), and replayed only
// while that secret is still the one in force: after a roll, a replay is a 409 saying so, never the
// retired secret.
import { createHash } from "node:crypto";
import { decryptSecret, encryptSecret, isSealedSecret } from "../crypto/secret-box";
import { modelColumns, TABLE } from "../db/columns";
import { pruneByAge } from "../db/prune-by-age";
import { Prisma } from "../db/generated/client";
import { joinTransaction } from "../db/join-transaction";
import type { TenantDb } from "../db/tenant-scope";
import { AppError, badRequest } from "../lib/errors";
import { startPeriodicJob, stopPeriodicJob, type PeriodicJob } from "../lib/periodic-job";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** Set (to "true") on an answer that is a stored first answer replayed. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
export const MAX_IDEMPOTENCY_KEY = 255;
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3_600_000;
const PRUNE_INTERVAL_MS = 3_600_000;
const PRUNE_JOB = "idempotency-key pruning";
/**
 * The request's transaction may last as long as its procedure: a send or a CRM call waits for the
 * provider up to its own timeout (10 s by default) inside it, past Prisma's default of 5 s.
 */
const TRANSACTION = { timeout: 30_000 } as const;

/** Printable ASCII (space to tilde), 1 to 255 characters. */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

/** The key as sent, or a 400 naming the header. */
export function parseIdempotencyKey(value: string): string {
  if (KEY_SHAPE.test(value)) return value;
  throw badRequest(`invalid header '${IDEMPOTENCY_KEY_HEADER}': must be 1 to ${MAX_IDEMPOTENCY_KEY} printable ASCII characters`, IDEMPOTENCY_KEY_HEADER);
}

const quoted = (key: string) => JSON.stringify(key);

/** The answer the REST bridge sends instead of the procedure's: a stored first answer. */
export type ReplayedAnswer = { status: number; body: string };

/**
 * A procedure whose answer carries a secret (its meta's `replayedSecret`): the stored answer is
 * sealed, and `retiredBecause` is asked, with the first answer's data, before each replay: null
 * while its secret is still in force, otherwise why not (the 409's message says it).
 */
export type SecretAnswer = {
  retiredBecause: (db: TenantDb, answer: unknown) => Promise<string | null>;
};

/** What a procedure's middleware chain gives back (tRPC's middleware result, as far as this reads it). */
type ChainResult = { ok: boolean; data?: unknown; error?: unknown };

export type IdempotentCall<R extends ChainResult> = {
  /** The header's value, as received. */
  key: string;
  tenantId: string;
  apiKeyId: string;
  db: TenantDb;
  /** The operation (its router path), part of what a repeat must match. */
  endpoint: string;
  /** The request's input (body and path parameters): a repeat with another input is a 409. */
  input: unknown;
  /** The response being shaped: `status` as the procedure set it; `replayed` set here for a repeat. */
  response: { status?: number; replayed?: ReplayedAnswer };
  successStatus: number;
  setHeader: (name: string, value: string) => void;
  /** The procedure, given the transaction to make its change in. */
  run: (db: TenantDb) => Promise<R>;
  /** Set when the answer carries a secret: stored sealed, replayed only while the secret is in force. */
  secret?: SecretAnswer;
};

const IR = modelColumns(Prisma.IdempotentResponseScalarFieldEnum);
const LOCK_SQL = `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked`;
const STORED_SQL = `
SELECT ${IR.requestFingerprint} AS fingerprint, ${IR.status} AS status, ${IR.body} AS body FROM ${TABLE.IdempotentResponse}
WHERE ${IR.tenantId} = $1::uuid AND ${IR.apiKeyId} = $2::uuid AND ${IR.key} = $3
  AND ${IR.createdAt} > now() - make_interval(secs => $4::double precision / 1000)`;
// A row found above is live; one still there past its period (not pruned yet) is replaced.
const STORE_SQL = `
INSERT INTO ${TABLE.IdempotentResponse} (${IR.id}, ${IR.tenantId}, ${IR.apiKeyId}, ${IR.key}, ${IR.requestFingerprint}, ${IR.status}, ${IR.body})
VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3, $4, $5::smallint, $6)
ON CONFLICT (${IR.tenantId}, ${IR.apiKeyId}, ${IR.key}) DO UPDATE
SET ${IR.requestFingerprint} = EXCLUDED.${IR.requestFingerprint}, ${IR.status} = EXCLUDED.${IR.status}, ${IR.body} = EXCLUDED.${IR.body}, ${IR.createdAt} = now()`;

/**
 * JSON text with every object's members in one order (sorted by name, at any depth; arrays keep
 * theirs): the same body with its members reordered is the same request.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_name, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((name) => [name, (v as Record<string, unknown>)[name]]),
        )
      : v,
  );
}

const fingerprintOf = (endpoint: string, inputText: string) => createHash("sha256").update(endpoint).update("\n").update(inputText).digest("hex");

/** Whether a stored fingerprint is this request's. */
function sameRequest(stored: string, fingerprint: string, call: { endpoint: string; input: unknown }): boolean {
  if (stored === fingerprint) return true;
  // Answers stored before the fingerprint was canonical hashed the body's members in the order sent:
  // a retry of such a request (within their 24 hours) still matches.
  return stored === fingerprintOf(call.endpoint, JSON.stringify(call.input));
}

/** Carries a failed result out of the transaction, rolling back what the procedure wrote. */
class RolledBack<R> extends Error {
  constructor(readonly result: R) {
    super("rolled back");
  }
}

/**
 * Runs `call.run` at most once per (tenant, API key, key) within the retention period; a repeat
 * with the same input answers the stored answer (`response.replayed`, with Idempotent-Replayed).
 */
export async function runIdempotently<R extends ChainResult>(call: IdempotentCall<R>): Promise<R> {
  const key = parseIdempotencyKey(call.key);
  const fingerprint = fingerprintOf(call.endpoint, canonicalJson(call.input));
  try {
    return await call.db.$transaction(async (tx) => {
      const [{ locked }] = await tx.$queryRawUnsafe<{ locked: boolean }[]>(LOCK_SQL, `idempotency:${call.tenantId}:${call.apiKeyId}:${key}`);
      if (!locked) {
        throw new AppError("conflict", `a request with ${IDEMPOTENCY_KEY_HEADER} ${quoted(key)} is still in progress; retry once it has been answered`, {
          field: IDEMPOTENCY_KEY_HEADER,
          headers: { "Retry-After": "1" },
        });
      }
      const [stored] = await tx.$queryRawUnsafe<{ fingerprint: string; status: number; body: string }[]>(
        STORED_SQL,
        call.tenantId,
        call.apiKeyId,
        key,
        IDEMPOTENCY_KEY_RETENTION_MS,
      );
      if (stored) {
        if (!sameRequest(stored.fingerprint, fingerprint, call)) {
          throw new AppError(
            "conflict",
            `${IDEMPOTENCY_KEY_HEADER} ${quoted(key)} was already used with another request (a different endpoint or body); use a new key for a new request`,
            { field: IDEMPOTENCY_KEY_HEADER },
          );
        }
        const body = call.secret ? await replayableSecretAnswer(call.secret, joinTransaction(tx), key, stored.body) : stored.body;
        call.response.replayed = { status: Number(stored.status), body };
        call.setHeader(IDEMPOTENT_REPLAYED_HEADER, "true");
        return { ok: true, data: undefined } as R;
      }
      const result = await call.run(joinTransaction(tx));
      if (!result.ok) throw new RolledBack(result);
      const status = call.response.status ?? call.successStatus;
      // The very text the bridge sends (JSON.stringify of the same data), so a replay is byte for byte;
      // sealed when it carries a secret.
      const text = JSON.stringify(result.data);
      await tx.$executeRawUnsafe(STORE_SQL, call.tenantId, call.apiKeyId, key, fingerprint, status, call.secret ? encryptSecret(text) : text);
      return result;
    }, TRANSACTION);
  } catch (err) {
    if (err instanceof RolledBack) return err.result as R;
    throw err;
  }
}

/**
 * The stored answer's text, unsealed, when its secret is still in force; otherwise a 409 saying why
 * (the client then gets a secret in force by rolling again, not the retired one).
 */
async function replayableSecretAnswer(secret: SecretAnswer, db: TenantDb, key: string, body: string): Promise<string> {
  // Stored plain (before answers carrying a secret were sealed; the migration
  // 20261207180000_withhold_stored_secrets took the secret out of those): not replayed.
  if (!isSealedSecret(body)) throw retired(key, "answers stored before their secrets were sealed are no longer replayed");
  let text: string;
  try {
    text = decryptSecret(body);
  } catch {
    // Sealed under another ENCRYPTION_KEY: it cannot be told whether its secret is in force.
    throw retired(key, "the stored answer can no longer be read");
  }
  const why = await secret.retiredBecause(db, JSON.parse(text));
  if (why === null) return text;
  throw retired(key, why);
}

const retired = (key: string, why: string) =>
  new AppError("conflict", `${IDEMPOTENCY_KEY_HEADER} ${quoted(key)} was first answered with a secret that is no longer in force: ${why}`, {
    field: IDEMPOTENCY_KEY_HEADER,
  });

const pruneOlderThan = pruneByAge(TABLE.IdempotentResponse, IR);

/** Deletes the stored answers older than `retentionMs`, in every tenant: how many it deleted. */
export const pruneIdempotentResponses = (retentionMs = IDEMPOTENCY_KEY_RETENTION_MS): Promise<number> => pruneOlderThan(retentionMs);

/** Prunes every `intervalMs` (hourly) in this process. */
export const startIdempotencyKeyPruning = (intervalMs = PRUNE_INTERVAL_MS): PeriodicJob =>
  startPeriodicJob(PRUNE_JOB, intervalMs, () => pruneIdempotentResponses());

/** Graceful shutdown: no further pruning; waits for a run in progress. */
export const stopIdempotencyKeyPruning = (): Promise<void> => stopPeriodicJob(PRUNE_JOB);
