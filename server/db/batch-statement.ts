// One batch of a retention purge or a tenant deletion: a statement in a transaction of its own, with
// `app.keep_analytics_counts` on for it, so the triggers that keep the daily analytics counters
// leave them as they are for the rows it deletes (migration retention_and_tenant_lifecycle): the
// totals keep counting what happened.
import type { PrismaClient } from "./generated/client";

/** Runs `sql` (a bounded DELETE or UPDATE) in its own short transaction: the rows it changed. */
export async function runBatch(db: PrismaClient, sql: string, params: unknown[]): Promise<number> {
  const [, changed] = await db.$transaction([
    db.$queryRawUnsafe("SELECT set_config('app.keep_analytics_counts', 'on', true)"),
    db.$executeRawUnsafe(sql, ...params),
  ]);
  return changed;
}

/**
 * The pause after a batch that took `batchMs`: at least `pauseMs`, and at least three times as long
 * as the batch itself, so a purge or deletion works at most a quarter of the time, and backs off by
 * itself when the database is busy (its batches get slower, its pauses longer).
 */
export const backOff = (pauseMs: number, batchMs: number) => Math.max(pauseMs, Math.round(3 * batchMs));
