// One batch of a retention purge or a tenant deletion: a statement in a transaction of its own, with
// `app.keep_analytics_counts` on for it, so the triggers that keep the daily analytics counters
// leave them as they are for the rows it deletes (migration retention_and_tenant_lifecycle): the
// totals keep counting what happened. Its commit does not wait for the WAL flush
// (synchronous_commit off, for this transaction only): the API's own commits do not queue behind a
// batch's WAL, and a batch lost in a crash is simply done again by the next run.
import type { PrismaClient } from "./generated/client";
import { queryOn, executeOn } from "./database";
import { statement } from "../lib/sql";

const BATCH_SETTINGS = statement("SELECT set_config('app.keep_analytics_counts', 'on', true), set_config('synchronous_commit', 'off', true)");

/**
 * A tenant deletion's batch also finds its rows through an index: for a tenant that holds most of a
 * table the planner picks a sequential scan, which reads again, batch after batch, the heap pages
 * the batches before emptied (their dead rows stay until vacuum), so the deletion's cost would grow
 * with the square of its rows. The purge's statements walk an index from a cursor instead.
 */
const DELETE_BATCH_SETTINGS = statement(`${BATCH_SETTINGS.text}, set_config('enable_seqscan', 'off', true)`);

/** Runs `sql` (a bounded DELETE of a tenant's rows) in its own short transaction: the rows it changed. */
export async function runBatch(db: PrismaClient, sql: string, params: unknown[]): Promise<number> {
  const [, changed] = await db.$transaction([queryOn(db, DELETE_BATCH_SETTINGS, []), executeOn(db, statement(sql), params)]);
  return changed;
}

/** Runs `sql`, a bounded statement returning one row `{ n, last }`, in its own short transaction: that row. */
export async function runCursorBatch(db: PrismaClient, sql: string, params: unknown[]): Promise<{ n: number; last: Date | null }> {
  const [, rows] = await db.$transaction([queryOn(db, BATCH_SETTINGS, []), queryOn(db, statement<{ n: number; last: Date | null }>(sql), params)]);
  return rows[0];
}

/**
 * The pause after a batch that took `batchMs`: at least `pauseMs`, and at least three times as long
 * as the batch itself, so a purge or deletion works at most a quarter of the time, and backs off by
 * itself when the database is busy (its batches get slower, its pauses longer).
 */
export const backOff = (pauseMs: number, batchMs: number) => Math.max(pauseMs, Math.round(3 * batchMs));

/** How long one batch should take: the rows per batch adapt to it (see nextBatchSize). */
export const BATCH_TARGET_MS = 20;

/**
 * The next batch's size after one of `size` rows took `batchMs`: scaled towards BATCH_TARGET_MS
 * (at most doubled at a time, at least 1, at most `max`), so a batch of slow rows (a busy machine,
 * an event with many deliveries) holds its locks and its share of the machine only briefly.
 */
export function nextBatchSize(size: number, batchMs: number, max: number): number {
  const scaled = batchMs > 0 ? Math.floor((size * BATCH_TARGET_MS) / batchMs) : 2 * size;
  return Math.max(1, Math.min(max, 2 * size, scaled));
}
