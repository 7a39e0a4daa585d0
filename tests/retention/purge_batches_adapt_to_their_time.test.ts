// The purge's batch size follows how long batches take: towards BATCH_TARGET_MS, growing at most
// twofold at a time, never past the operator's RETENTION_PURGE_BATCH nor below one row.
import { describe, expect, it } from "vitest";
import { BATCH_TARGET_MS, nextBatchSize } from "../../server/db/batch-statement";

describe("purge batch size", () => {
  it("shrinks_a_batch_that_took_longer_than_the_target_in_proportion", () => {
    expect(BATCH_TARGET_MS).toBe(20);
    expect(nextBatchSize(500, 80, 500)).toBe(125);
    expect(nextBatchSize(100, 21, 500)).toBe(95);
    expect(nextBatchSize(3, 1_000, 500)).toBe(1);
  });

  it("grows_a_fast_batch_at_most_twofold_and_never_past_the_maximum", () => {
    expect(nextBatchSize(100, 2, 500)).toBe(200);
    expect(nextBatchSize(100, 10, 500)).toBe(200);
    expect(nextBatchSize(100, 15, 500)).toBe(133);
    expect(nextBatchSize(400, 1, 500)).toBe(500);
    expect(nextBatchSize(2, 0, 2)).toBe(2);
  });
});
