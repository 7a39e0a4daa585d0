// The embedded delivery engine (default): a database-backed worker in the server process.
// It claims due deliveries with FOR UPDATE SKIP LOCKED and a lease (`locked_until`), so several
// processes on one PostgreSQL never take the same delivery, and a delivery whose process died
// mid-attempt is claimed again once its lease expires (at-least-once; nothing is lost).
// Woken at once by new deliveries (in-process signal; LISTEN/NOTIFY across PostgreSQL processes),
// by its own retry timers, and otherwise by a poll.
import pg from "pg";
import type { PrismaClient } from "../db/generated/client";
import { databaseKind, getDb } from "../db/client";
import { OUTBOX_CHANNEL, onOutboxWrite } from "../events/outbox-signal";
import { log } from "../log";
import { attemptDelivery, TARGET_COLUMNS, type DeliveryTarget } from "./delivery-attempt";
import { attemptTimeoutMs } from "./retry-ladder";

export type WorkerOptions = {
  /** Attempts in flight at once. */
  concurrency?: number;
  /** How often due work is looked for when nothing woke the worker. */
  pollIntervalMs?: number;
  /** How long a claim is held before another worker may take the delivery again. */
  leaseMs?: number;
  /**
   * What to do with claimed deliveries; default: attempt them here. The Inngest engine passes a
   * dispatcher instead (the same claiming, a different runner).
   */
  handle?: (db: PrismaClient, claimed: DeliveryTarget[]) => Promise<void>;
  /** Claim condition on `d` for this engine. */
  engineFilter?: string;
};

const envInt = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};

export function claimSql(engineFilter: string) {
  return `
WITH due AS (
  SELECT d.id FROM webhook_deliveries d
  JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.enabled
  WHERE d.status = 'pending' AND ${engineFilter} AND d.next_attempt_at <= now()
    AND (d.locked_until IS NULL OR d.locked_until <= now())
  ORDER BY d.next_attempt_at
  LIMIT $1::int
  FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $2::int / 1000.0)
FROM due, webhook_subscriptions s, events e
WHERE d.id = due.id AND s.id = d.subscription_id AND e.id = d.event_id
RETURNING ${TARGET_COLUMNS}`;
}

export class DeliveryWorker {
  private running = false;
  private loopDone: Promise<void> | undefined;
  private inFlight = new Set<Promise<void>>();
  private wakePending = false;
  private wakeSleeper: (() => void) | undefined;
  private timers = new Set<NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;
  private listener: pg.Client | undefined;
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly sql: string;

  constructor(private readonly options: WorkerOptions = {}) {
    this.concurrency = options.concurrency ?? envInt("WEBHOOK_WORKER_CONCURRENCY", 32);
    this.pollIntervalMs = options.pollIntervalMs ?? envInt("WEBHOOK_POLL_INTERVAL_MS", 1000);
    // Longer than an attempt can take, so a live worker never loses its claim mid-attempt.
    this.leaseMs = options.leaseMs ?? envInt("WEBHOOK_LEASE_MS", attemptTimeoutMs() + 20_000);
    this.sql = claimSql(options.engineFilter ?? "d.inngest_run_id IS NULL");
  }

  get isRunning() {
    return this.running;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const db = await getDb();
    this.unsubscribe = onOutboxWrite(() => this.wake());
    if (databaseKind() === "postgres") await this.listen();
    this.loopDone = this.loop(db);
  }

  /** Stops claiming, then waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight]);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  wake(): void {
    this.wakePending = true;
    this.wakeSleeper?.();
  }

  /** Wakes the worker after `ms` (a retry it scheduled itself). */
  private wakeIn(ms: number) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.wake();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private async listen() {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    client.on("notification", () => this.wake());
    client.on("error", (err) => {
      log.warn("webhook worker: LISTEN connection failed; relying on polling until it reconnects", { error: err.message });
      if (this.listener === client) this.listener = undefined;
      const retry = setTimeout(() => this.running && !this.listener && this.listen().catch(() => {}), 1000);
      retry.unref();
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    this.listener = client;
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakePending || !this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleeper = done;
    }).then(() => {
      this.wakeSleeper = undefined;
    });
  }

  private async loop(db: PrismaClient) {
    while (this.running) {
      this.wakePending = false;
      const capacity = this.concurrency - this.inFlight.size;
      let claimed: DeliveryTarget[] = [];
      if (capacity > 0) {
        try {
          claimed = await db.$queryRawUnsafe<DeliveryTarget[]>(this.sql, capacity, this.leaseMs);
        } catch (err) {
          log.error("webhook worker: claim failed", { error: (err as Error).message });
        }
        if (claimed.length) this.track(db, claimed);
      }
      // A full batch suggests more is due: look again at once (capacity permitting).
      if (claimed.length && claimed.length === capacity) continue;
      await this.sleep(this.pollIntervalMs);
    }
  }

  private track(db: PrismaClient, claimed: DeliveryTarget[]) {
    const runs = this.options.handle ? [this.options.handle(db, claimed)] : claimed.map((target) => this.attempt(db, target));
    for (const run of runs) {
      const p = run
        .catch((err) => log.error("webhook worker: attempt failed unexpectedly", { error: (err as Error).message }))
        .finally(() => {
          this.inFlight.delete(p);
          this.wake();
        });
      this.inFlight.add(p);
    }
  }

  private async attempt(db: PrismaClient, target: DeliveryTarget) {
    const result = await attemptDelivery(db, target);
    // The retry is due at the database's now() + delay; a few ms of margin so the claim finds it.
    if (result.recorded && result.status === "pending" && result.nextDelayMs !== null) this.wakeIn(result.nextDelayMs + 5);
  }
}

let processWorker: DeliveryWorker | undefined;

/** Starts this process's embedded worker (idempotent). */
export async function startEmbeddedWorker(options?: WorkerOptions): Promise<DeliveryWorker> {
  processWorker ??= new DeliveryWorker(options);
  await processWorker.start();
  return processWorker;
}

export async function stopEmbeddedWorker(): Promise<void> {
  const worker = processWorker;
  processWorker = undefined;
  await worker?.stop();
}
