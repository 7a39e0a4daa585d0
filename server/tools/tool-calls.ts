// Retried tool calls are harmless: a write tool called with the runtime's `tool_call_id` records
// the call in `tool_calls` inside the transaction that makes the change, so the change and the
// record commit (or roll back) together. A repeat of the id for the same tenant and tool finds the
// record and answers the first call's result again, emitting nothing. Two calls arriving at once
// serialize on the unique (tenant_id, tool, tool_call_id) key: the second's insert waits for the
// first's transaction, then inserts nothing and reads the committed result. A first call that
// failed left no record, so its retry runs again.
//
// Records are kept for TOOL_CALL_RETENTION_MS (7 days) and then pruned by every server process,
// hourly: a runtime retries a call within seconds or minutes, so a week is ample, and after it a
// repeated id simply runs again.
import { modelColumns, TABLE } from "../db/columns";
import { pruneByAge } from "../db/prune-by-age";
import { Prisma } from "../db/generated/client";
import type { TenantDb, TenantSql } from "../db/tenant-scope";
import { joinTransaction } from "../db/join-transaction";
import { startPeriodicJob, stopPeriodicJob, type PeriodicJob } from "../lib/periodic-job";
import { queryOn, executeOn } from "../db/database";
import { statement } from "../lib/sql";

export const MAX_TOOL_CALL_ID = 255;
export const TOOL_CALL_RETENTION_MS = 7 * 24 * 3_600_000;
const PRUNE_INTERVAL_MS = 3_600_000;
const PRUNE_JOB = "tool-call pruning";

// Plain statements, not model calls: this bookkeeping runs on every write tool call. Their column
// names come from the model (server/db/columns.ts).
const TC = modelColumns(Prisma.ToolCallScalarFieldEnum);
const CLAIM_CALL_SQL = statement<{ id: string }>(`
INSERT INTO ${TABLE.ToolCall} (${TC.id}, ${TC.tenantId}, ${TC.tool}, ${TC.toolCallId}) VALUES (gen_random_uuid(), $1::uuid, $2, $3)
ON CONFLICT (${TC.tenantId}, ${TC.tool}, ${TC.toolCallId}) DO NOTHING RETURNING ${TC.id} AS id`);
// The result is a JSON string value holding the answer's text (`#>> '{}'` unwraps it).
const STORED_RESULT_SQL = statement<{ text: string | null }>(
  `SELECT ${TC.result} #>> '{}' AS text FROM ${TABLE.ToolCall} WHERE ${TC.tenantId} = $1::uuid AND ${TC.tool} = $2 AND ${TC.toolCallId} = $3`,
);
const STORE_RESULT_SQL = statement(`UPDATE ${TABLE.ToolCall} SET ${TC.result} = to_jsonb($2::text) WHERE ${TC.id} = $1::uuid`);

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
      const inserted = await queryOn(tx, CLAIM_CALL_SQL, [tenantId, tool, toolCallId]);
      if (!inserted.length) {
        const [stored] = await queryOn(tx, STORED_RESULT_SQL, [tenantId, tool, toolCallId]);
        return { text: stored?.text ?? null };
      }
      const text = JSON.stringify(await work(joinTransaction(tx)));
      await executeOn(tx, STORE_RESULT_SQL, [inserted[0].id, text]);
      return { text };
    });
    // null: the record went away between the insert and the read (pruned); the call runs again.
    if (outcome.text !== null) return JSON.parse(outcome.text) as R;
  }
}

/**
 * A tool that writes its call's record in the very statement that makes its change (book_appointment,
 * see `recordsItsCall`) answers a repeat with this: the first call's answer text, null if there is none.
 */
export async function storedToolCallResult(sql: TenantSql, tool: string, toolCallId: string): Promise<string | null> {
  const [stored] = await sql(STORED_RESULT_SQL, [tool, toolCallId]);
  return stored?.text ?? null;
}

const pruneOlderThan = pruneByAge(TABLE.ToolCall, TC);

/** Deletes the tool-call records older than `retentionMs`, in every tenant: how many it deleted. */
export const pruneToolCalls = (retentionMs = TOOL_CALL_RETENTION_MS): Promise<number> => pruneOlderThan(retentionMs);

/** Prunes every `intervalMs` (hourly) in this process. */
export const startToolCallPruning = (intervalMs = PRUNE_INTERVAL_MS): PeriodicJob => startPeriodicJob(PRUNE_JOB, intervalMs, () => pruneToolCalls());

/** Graceful shutdown: no further pruning; waits for a run in progress. */
export const stopToolCallPruning = (): Promise<void> => stopPeriodicJob(PRUNE_JOB);
