// Running unchanged domain services inside a transaction someone else opened: the agent tools'
// `tool_call_id` (server/tools/tool-calls.ts) and /api/v1's Idempotency-Key (server/idempotency/)
// both commit a request's change together with the record of its answer.
import type { Statement, TenantSql } from "../lib/sql";
import type { TenantDb, TenantTx } from "./tenant-scope";
import { queryOn } from "./database";

/** What a joined transaction answers for this property: the transaction itself. */
const JOINED = Symbol("joined transaction");

/**
 * The tenant database as seen from inside `tx`: a domain service's own `db.$transaction(fn)` runs
 * `fn` in `tx` instead of opening a second transaction, so the unchanged services write in the
 * caller's transaction.
 */
export function joinTransaction(tx: TenantTx): TenantDb {
  const $transaction = (work: ((tx: TenantTx) => Promise<unknown>) | Promise<unknown>[]) => (typeof work === "function" ? work(tx) : Promise.all(work));
  // The proxy is a TenantDb for every member a service uses (models, raw queries, $transaction).
  return new Proxy(tx, {
    get: (target, prop) => (prop === "$transaction" ? $transaction : prop === JOINED ? target : Reflect.get(target, prop)),
  }) as unknown as TenantDb;
}

/**
 * A service that writes with one prepared statement (on the statement connections, outside any
 * transaction) runs it in the caller's transaction instead when `db` is one joined here; null otherwise.
 */
export function joinedTransactionSql(db: TenantDb): TenantSql | null {
  const tx = (db as unknown as { [JOINED]?: TenantTx })[JOINED];
  if (!tx) return null;
  const run = <Row>(sql: Statement<Row>, values: unknown[]): Promise<Row[]> => queryOn(tx, sql, [db.tenantId, ...values]);
  return Object.assign(run, { tenantId: db.tenantId });
}
