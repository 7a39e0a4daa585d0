// The client side of the query timeout: one sweep per process instead of a timer per call.
//
// PostgreSQL bounds every statement itself (statement_timeout, lock_timeout,
// idle_in_transaction_session_timeout; client.ts): a slow statement is cancelled and its
// transaction rolled back, and the call fails with an answer. What the server cannot bound is its own
// silence: paused (SIGSTOP, a stalled disk or VM, a failover) or cut off, it answers nothing. Each
// pool counts its calls in flight and notes when one finishes; every SWEEP_MS the watchdog looks at
// each pool, and one that had calls in flight and finished none for longer than the query timeout
// plus CLIENT_GIVE_UP_MARGIN_MS is given up: its connections are discarded (their calls fail as
// "unavailable", a 503, and the breaker's probe starts), so no request waits past that bound.
//
// A write whose fate the client cannot know (its COMMIT, or a write outside a transaction, lost
// with its connection) fails as DatabaseOutcomeUnknownError instead: it may have committed.
import pg from "pg";
import { DatabaseOutcomeUnknownError, DatabaseTimeoutError, isDatabaseUnavailable, neverReachedTheServer, statementWrites } from "../lib/database-errors";
import { setting } from "../lib/settings";
import { noteDatabaseError } from "./availability";

const SWEEP_MS = 250;
/** How much longer than the query timeout a client waits for an answer before it gives the connections up. */
const CLIENT_GIVE_UP_MARGIN_MS = 1_000;

/**
 * One watched pool: calls in flight, and whether one finished since the last sweep. `overdue`,
 * when the pool can see its connections one by one, gives up those whose call is past the bound
 * even while others progress (a live server can hold one COMMIT, which statement_timeout does not cover).
 */
export type WatchedPool = {
  name: string;
  inflight: number;
  progressed: boolean;
  quietSweeps: number;
  discard: () => void;
  overdue?: (now: number, limitMs: number) => number;
};

const pools = new Set<WatchedPool>();
let sweeper: NodeJS.Timeout | null = null;

/** The longest a call may go unanswered: the query timeout plus the margin. */
const giveUpAfterMs = () => setting("DATABASE_QUERY_TIMEOUT_MS") + CLIENT_GIVE_UP_MARGIN_MS;

function sweep(): void {
  const limit = Math.ceil(giveUpAfterMs() / SWEEP_MS);
  const now = Date.now();
  for (const pool of pools) {
    if (pool.overdue) {
      const dropped = pool.overdue(now, giveUpAfterMs());
      if (dropped > 0) {
        // A quiet pool means a silent server: the breaker opens at once. Otherwise only its probe starts.
        noteDatabaseError(pool.progressed ? new Error("Connection terminated: no answer in time") : new DatabaseTimeoutError(giveUpAfterMs()));
      }
      pool.progressed = false;
      continue;
    }
    if (pool.inflight <= 0 || pool.progressed) {
      pool.progressed = false;
      pool.quietSweeps = 0;
      continue;
    }
    if (++pool.quietSweeps < limit) continue;
    pool.quietSweeps = 0;
    // The breaker opens at once (calls fail fast) and its probe tells when the server is back.
    noteDatabaseError(new DatabaseTimeoutError(giveUpAfterMs()));
    pool.discard();
  }
}

/** Watches a pool; `discard` drops its connections (calls in flight then fail). */
export function watchPool(name: string, discard: () => void): WatchedPool {
  const pool: WatchedPool = { name, inflight: 0, progressed: false, quietSweeps: 0, discard };
  pools.add(pool);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  return pool;
}

export function unwatchPool(pool: WatchedPool): void {
  pools.delete(pool);
  if (pools.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

type QueryConfig = { text?: unknown };

/**
 * A node-postgres pool (Prisma's) whose clients are watched as above. Each client also knows
 * whether it is inside a transaction (BEGIN … COMMIT/ROLLBACK, as @prisma/adapter-pg sends them),
 * so that a connection lost at COMMIT, or under a write outside a transaction, is reported as an
 * unknown outcome rather than as "unavailable, retry".
 */
export function watchedPgPool(config: pg.PoolConfig): pg.Pool & { unwatch: () => void } {
  const clients = new Set<pg.Client>();
  // Destroyed with an error, so node-postgres marks the client unusable (the pool then drops it
  // instead of lending it out again) and fails its call in flight, and any later one, at once.
  const destroy = (client: pg.Client) =>
    (client as unknown as { connection: { stream: { destroy(err: Error): void } } }).connection.stream.destroy(
      new Error(`Connection terminated: no answer from the database within ${giveUpAfterMs()} ms`),
    );
  const watched = watchPool("prisma", () => clients.forEach(destroy));
  watched.overdue = (now, limitMs) => {
    let dropped = 0;
    for (const client of clients) {
      const since = (client as unknown as { activeSince: number }).activeSince;
      if (since > 0 && now - since >= limitMs) {
        dropped++;
        destroy(client);
      }
    }
    return dropped;
  };

  class WatchedClient extends pg.Client {
    inTransaction = false;
    /** Since when it has been waiting for an answer (0: not waiting). Calls queue on a client (e.g. Prisma's ROLLBACK behind a statement that timed out on its side), so this is when the oldest of them was sent, or the one before it answered. */
    activeSince = 0;
    pending = 0;
  }
  const plainQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  Object.defineProperty(WatchedClient.prototype, "query", {
    value(this: WatchedClient, ...args: unknown[]) {
      const config = args[0] as QueryConfig | string;
      // Callback style and submittables are the pool's and pg's own business: not counted.
      if (typeof args[args.length - 1] === "function" || (typeof config === "object" && config !== null && "submit" in config))
        return plainQuery.apply(this, args);
      const text = typeof config === "string" ? config : String(config?.text ?? "");
      watched.inflight++;
      if (this.pending++ === 0) this.activeSince = Date.now();
      const settled = () => {
        this.activeSince = --this.pending === 0 ? 0 : Date.now();
      };
      return (plainQuery.apply(this, args) as Promise<unknown>).then(
        (result) => {
          settled();
          watched.inflight--;
          watched.progressed = true;
          if (/^\s*begin\b/i.test(text)) this.inTransaction = true;
          else if (/^\s*(commit|rollback)\b/i.test(text)) this.inTransaction = false;
          return result;
        },
        (err: unknown) => {
          settled();
          watched.inflight--;
          watched.progressed = true;
          const committing = /^\s*commit\b/i.test(text);
          const lostWrite = committing || (!this.inTransaction && statementWrites(text));
          if (/^\s*(commit|rollback)\b/i.test(text)) this.inTransaction = false;
          if (lostWrite && isDatabaseUnavailable(err) && !neverReachedTheServer(err)) {
            noteDatabaseError(err);
            throw new DatabaseOutcomeUnknownError(err);
          }
          throw err;
        },
      );
    },
  });

  const pool = new pg.Pool({ ...config, Client: WatchedClient as unknown as typeof pg.Client }) as pg.Pool & { unwatch: () => void };
  pool.on("connect", (client) => {
    clients.add(client);
    client.once("end", () => clients.delete(client));
  });
  pool.on("remove", (client) => clients.delete(client));
  pool.unwatch = () => unwatchPool(watched);
  return pool;
}
