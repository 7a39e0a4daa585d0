// The one interface every rate-limit store implements (Upstash REST, Redis over TCP, in-process).
import { setting } from "../lib/settings";

/** Outcome of counting one request against one bucket. `reset` is epoch milliseconds of the window end. */
export type StoreResult = { success: boolean; limit: number; remaining: number; reset: number };

export type StoreKind = "upstash" | "redis" | "memory";

export interface LimitStore {
  readonly kind: StoreKind;
  /**
   * Sliding-window count of `rate` requests (default 1) against `identifier`, which is already
   * namespaced by layer (e.g. `key:<id>`); the stored key is `<prefix>:<identifier>:<window index>`
   * (see keyPrefix). A count is all or nothing: admitted (and counted) only when all `rate` fit
   * under the limit, else refused and counted nothing. A negative rate is a refund, never refused.
   * Rejects when the store cannot answer.
   */
  limit(identifier: string, limit: number, windowMs: number, rate?: number): Promise<StoreResult>;
  /** Resolves when the store answers a trivial command (PING); rejects otherwise. */
  probe(): Promise<void>;
  /** Deletes every counter under this store's prefix (tests, benchmarks). */
  clear(): Promise<void>;
  /** Resolves once the store can answer (a TCP store's first connection); never rejects. */
  ready?(timeoutMs: number): Promise<void>;
  /** Releases connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** Namespace of every rate-limit key in a shared Redis (RATE_LIMIT_KEY_PREFIX, default `rl`); a store reads it once, when made. */
export function keyPrefix(): string {
  return setting("RATE_LIMIT_KEY_PREFIX");
}
