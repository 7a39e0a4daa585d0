// Retried tool calls are harmless: a write tool called with the runtime's `tool_call_id` records
// the call in `tool_calls` inside the transaction that makes the change, so the change and the
// record commit (or roll back) together. A repeat of the id for the same tenant and tool finds the
// record and answers the first call's result again, emitting nothing. Two calls arriving at once
// serialize on the unique (tenant_id, tool, tool_call_id) key: the second's insert waits for the
// first's transaction, then inserts nothing and reads the committed result. A first call that
// failed left no record, so its retry runs again.
import type { TenantDb, TenantTx } from "../db/tenant-scope";

export const MAX_TOOL_CALL_ID = 255;

/**
 * The tenant database as seen from inside `tx`: a domain service's own `db.$transaction(fn)` runs
 * `fn` in `tx` instead of opening a second transaction, so the unchanged services (the ones
 * /api/v1 calls) write in the tool call's transaction.
 */
export function joinTransaction(tx: TenantTx): TenantDb {
  const $transaction = (work: ((tx: TenantTx) => Promise<unknown>) | Promise<unknown>[]) =>
    typeof work === "function" ? work(tx) : Promise.all(work);
  // The proxy is a TenantDb for every member a service uses (models, raw queries, $transaction).
  return new Proxy(tx, { get: (target, prop, receiver) => (prop === "$transaction" ? $transaction : Reflect.get(target, prop, receiver)) }) as unknown as TenantDb;
}

/**
 * Runs `work` once per (tenant, tool, toolCallId); without an id, simply runs it. The result is
 * kept as its JSON text (jsonb would reorder keys), so every answer to one id is the same bytes.
 */
export async function withToolCall<R>(
  db: TenantDb,
  tenantId: string,
  tool: string,
  toolCallId: string | undefined,
  work: (db: TenantDb) => Promise<R>,
): Promise<R> {
  if (toolCallId === undefined) return work(db);
  for (;;) {
    const outcome = await db.$transaction(async (tx) => {
      const inserted = await tx.toolCall.createManyAndReturn({
        data: [{ tenantId, tool, toolCallId }],
        skipDuplicates: true,
        select: { id: true },
      });
      if (!inserted.length) {
        const stored = await tx.toolCall.findFirst({ where: { tool, toolCallId }, select: { result: true } });
        return { text: typeof stored?.result === "string" ? stored.result : null };
      }
      const text = JSON.stringify(await work(joinTransaction(tx)));
      await tx.toolCall.update({ where: { id: inserted[0].id }, data: { result: text } });
      return { text };
    });
    // null: the record went away between the insert and the read (pruned); the call runs again.
    if (outcome.text !== null) return JSON.parse(outcome.text) as R;
  }
}
