// Deleting a table's rows older than a retention period, in every tenant, in batches (the
// created_at index keeps each statement short and its locks brief). Processes pruning at once only
// race to delete the same rows, which is harmless.
import { database, executeOn } from "./database";
import { statement } from "../lib/sql";

const PRUNE_BATCH = 1_000;

/** A pruner for `table` (its id and created_at column names): `prune(retentionMs)` answers how many rows it deleted. */
export function pruneByAge(table: string, columns: { id: string; createdAt: string }) {
  const deleteOld = statement(`
DELETE FROM ${table} WHERE ${columns.id} IN (
  SELECT ${columns.id} FROM ${table} WHERE ${columns.createdAt} < now() - make_interval(secs => $1::double precision / 1000) LIMIT $2::int
)`);
  return async (retentionMs: number): Promise<number> => {
    const db = database().prisma;
    let pruned = 0;
    for (;;) {
      const deleted = await executeOn(db, deleteOld, [retentionMs, PRUNE_BATCH]);
      pruned += deleted;
      if (deleted < PRUNE_BATCH) return pruned;
    }
  };
}
