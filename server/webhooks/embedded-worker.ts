// The embedded delivery engine (default): a database-backed worker in the server process.
// It claims due deliveries with FOR UPDATE SKIP LOCKED and a lease (`locked_until`), so several
// processes on one PostgreSQL never take the same delivery, and a delivery whose process died
// mid-attempt is claimed again once its lease expires (at-least-once; nothing is lost).
// Woken at once by new deliveries (in-process signal; LISTEN/NOTIFY across PostgreSQL processes),
// by its own retry timers, and otherwise by a poll.
import pg from "pg";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma, type PrismaClient } from "../db/generated/client";
import { DatabaseOutcomeUnknownError, isDatabaseUnavailable } from "../lib/database-errors";
import { databaseKind, directDatabaseUrl, getDb, getGenericPlanSql, getPlannedSql, getSql, type SqlRunner } from "../db/client";
import { OUTBOX_CHANNEL, onOutboxWrite } from "../outbox/outbox-signal";
import { log } from "../lib/log";
import { attemptDelivery, type DeliveryTarget } from "./delivery-attempt";
import { claimSql, fairnessLimits, PACE_HORIZON_MS, pacedClaimSql } from "./claim-deliveries";
import { MAX_RESLOT_WAIT_MS, reserveSendSlots, type SendSlot, sendIsLate, sendSlot, slotAfter } from "./send-slots";
import { attemptTimeoutMs } from "./retry-ladder";
import { HOLD_RECHECK_AFTER_MS, heldFor, readHold } from "./subscription-holds";
import { setting } from "../lib/settings";

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
  /**
   * Whether the claim hands out send slots of each subscription's rate limit (default). The Inngest
   * dispatcher claims unpaced: its runs reserve a slot before each attempt instead.
   */
  paced?: boolean;
  /** The prepared-statement runner for the recorded successes and new send slots (default: the process's). */
  sql?: SqlRunner;
  /**
   * The runner of the claim (default: the process's; see `claim`). A paced worker sends its next
   * claim before the previous one answered: the runner must run them one at a time, in order.
   */
  claimRunner?: SqlRunner;
};

/** How long before its lease ends an attempt stops trying to record its outcome. */
const RECORD_MARGIN_MS = 1_000;

/** A claimed delivery: the target, its subscription's rate, and how long it waits for its send slot. */
type Claimed = DeliveryTarget & { rate: number; wait_ms: number };
/**
 * A row of a claim's answer. The paced claim answers a row even when it took nothing (its delivery
 * columns null), and says on every row how many subscriptions it left alone because another
 * process's claim changed them after its snapshot (pacedClaimSql).
 */
type ClaimRow = (Claimed | (Partial<Record<keyof Claimed, null>> & { delivery_id: null })) & { changed_skipped?: number };
const isClaimed = (row: ClaimRow): row is Claimed => row.delivery_id !== null;

/**
 * One subscription's sends from this process, in claim order: each takes its turn after the one
 * before. `dues`: the slots of the sends waiting, the one in turn first; `spare`: slots a late send
 * took for the late sends queued behind it.
 */
type Lane = { tail: Promise<void>; lastSentAt: number; dues: SendSlot[]; spare: SendSlot[] };

/**
 * After a claim that found less than it had room for, or beside one on its way, the next claim
 * waits until this share of the worker's places (12 of 32) have freed, or GATHER_MS have passed
 * with no claim on its way, unless new work wakes it (a new delivery, a retry coming due): at a
 * freed place, a claim at once found one delivery or none (the tenant's cap or the endpoints' still
 * full), at the whole claim's cost. A quarter (8 of 32) with claims overlapping made them smaller
 * and PostgreSQL's CPU per delivery higher.
 */
const GATHER_SHARE = 3 / 8;
/** The longest a freed place waits for others before the next claim (see GATHER_SHARE). */
const GATHER_MS = 10;

/**
 * Claims on their way at once (paced claims). A freed place used to wait for the claim on its way
 * to come back before its own could be sent; now the next claim is sent as soon as a share of places
 * has freed (GATHER_SHARE), and PostgreSQL starts it the moment the one before commits. The claim
 * runner runs its statements one at a time, in order (one connection): the second claim sees the
 * first's leases, so the caps and "never its own deliveries" hold as with one claim at a time.
 */
const CLAIMS_AT_ONCE = 2;

/**
 * A claim that failed for want of the database is tried again this soon, not at the next poll: the
 * wake-up it answered (a NOTIFY, LISTEN coming back after an outage) is not sent twice. During an
 * outage the retry fails at once (db/availability.ts), so this costs nothing.
 */
const CLAIM_RETRY_MS = 500;

/** LISTEN reconnects after 100 ms, doubling up to this (with jitter) while PostgreSQL stays away. */
const LISTEN_RETRY_MAX_MS = 2_000;

// Columns named through the model (server/db/columns.ts).
const DELIVERY = modelColumns(Prisma.WebhookDeliveryScalarFieldEnum);
/**
 * Gives up this process's leases ($1 ids) on stopping, so another worker takes them at once. Those
 * never sent ($2 ids) lose their started mark too: their next attempt is no possible repeat.
 */
const RELEASE_LEASES_SQL = `UPDATE ${TABLE.WebhookDelivery} SET ${DELIVERY.lockedUntil} = NULL,
  ${DELIVERY.attemptStartedAt} = CASE WHEN ${DELIVERY.id} = ANY($2::uuid[]) THEN NULL ELSE ${DELIVERY.attemptStartedAt} END
  WHERE ${DELIVERY.id} = ANY($1::uuid[]) AND ${DELIVERY.status} = 'pending'`;
const SUBSCRIPTION = modelColumns(Prisma.WebhookSubscriptionScalarFieldEnum);
/**
 * A claimed delivery whose subscription is held (a consumer's Retry-After) gives its lease back,
 * due again at the hold's end ($5 ms from now, or the row's `held_until` if later), its attempt
 * unspent; its started mark goes too, unless the claim found it there ($4: a possible repeat).
 */
const GIVE_BACK_HELD_SQL = `UPDATE ${TABLE.WebhookDelivery} d SET ${DELIVERY.lockedUntil} = NULL,
  ${DELIVERY.attemptStartedAt} = CASE WHEN $4::boolean THEN d.${DELIVERY.attemptStartedAt} END,
  ${DELIVERY.nextAttemptAt} = greatest(d.${DELIVERY.nextAttemptAt}, s.${SUBSCRIPTION.heldUntil}, now() + make_interval(secs => $5::int / 1000.0))
  FROM ${TABLE.WebhookSubscription} s
  WHERE d.${DELIVERY.id} = $1::uuid AND d.${DELIVERY.cycle} = $2::int AND d.${DELIVERY.attemptCount} = $3::int AND d.${DELIVERY.status} = 'pending'
    AND s.${SUBSCRIPTION.id} = d.${DELIVERY.subscriptionId}`;

export class DeliveryWorker {
  private running = false;
  private loopDone: Promise<void> | undefined;
  /** Runs in flight, each with the deliveries it holds leases on. */
  private inFlight = new Map<Promise<void>, string[]>();
  /** The loop has something to look at (it does not sleep). */
  private wakePending = false;
  /** New work may be due (a new delivery, a retry's time, another process's signal): claim without gathering. */
  private newWork = false;
  /**
   * A claim is on its way, or the last one found less than it had room for: the next one gathers
   * freed places first.
   */
  private gathering = false;
  /** Claims on their way, and the places they were sent for (reserved until they answer). */
  private claims = new Set<Promise<void>>();
  private placesClaiming = 0;
  /** The places free (and not claiming) right after the last claim, and until when (epoch ms) the next claim gathers more. */
  private freeAfterClaim = 0;
  private gatherUntil = 0;
  private wakeSleeper: (() => void) | undefined;
  private timers = new Set<NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;
  private listener: pg.Client | undefined;
  private listenFailures = 0;
  private listenRetry: NodeJS.Timeout | undefined;
  private claimFailing = false;
  private lanes = new Map<string, Lane>();
  /** Claimed deliveries whose request is not written yet. */
  private unsent = new Set<string>();
  /**
   * Claimed deliveries whose consumer answered with a success, their record on its way: no longer
   * attempts in flight (the worker's concurrency and the caps count them free; see leasedSql).
   */
  private succeeded = new Set<string>();
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  /** Places a claim after a short one waits for (GATHER_SHARE); 1 for a dispatcher (`handle`): it claims at each. */
  private readonly gatherPlaces: number;
  /** CLAIMS_AT_ONCE for paced claims; the unpaced claim runs over a pool (concurrent claims would not see each other's leases). */
  private readonly claimsAtOnce: number;
  /**
   * The claim, never through Prisma (its per-query work cost more than the claim's own). The paced
   * claim keeps the plan of its first call (getGenericPlanSql): planning it was half its database
   * CPU, and its generic plan walks each subscription's own pending deliveries like a custom one
   * (docs/perf/2026-11-webhook-delivery.md). The unpaced claim is planned at each call (getPlannedSql).
   */
  private readonly claim: { text: string };
  private readonly paced: boolean;

  constructor(private readonly options: WorkerOptions = {}) {
    this.concurrency = options.concurrency ?? setting("WEBHOOK_WORKER_CONCURRENCY");
    this.pollIntervalMs = options.pollIntervalMs ?? setting("WEBHOOK_POLL_INTERVAL_MS");
    // Longer than an attempt can take, so a live worker never loses its claim mid-attempt.
    this.leaseMs = options.leaseMs ?? setting("WEBHOOK_LEASE_MS") ?? attemptTimeoutMs() + 20_000;
    this.paced = options.paced ?? true;
    this.claimsAtOnce = this.paced ? CLAIMS_AT_ONCE : 1;
    this.gatherPlaces = options.handle ? 1 : Math.max(1, Math.floor(this.concurrency * GATHER_SHARE));
    const engineFilter = options.engineFilter ?? `d.${DELIVERY.inngestRunId} IS NULL`;
    this.claim = { text: this.paced ? pacedClaimSql(engineFilter) : claimSql(engineFilter) };
  }

  get isRunning() {
    return this.running;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const db = await getDb();
    const sql = this.options.sql ?? (await getSql());
    const claimRunner = this.options.claimRunner ?? (await (this.paced ? getGenericPlanSql() : getPlannedSql()));
    this.unsubscribe = onOutboxWrite(() => this.wake());
    if (databaseKind() === "postgres") await this.listen();
    this.loopDone = this.loop(db, sql, claimRunner);
  }

  /**
   * Stops claiming, then waits for the attempts in flight to be sent and recorded. Past `deadline`
   * (epoch ms) it stops waiting and releases the leases of the deliveries still in flight, so the
   * next worker takes them at once rather than after the lease.
   */
  async stop(deadline = Infinity): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    clearTimeout(this.listenRetry);
    this.wake();
    await this.loopDone;
    if (!(await settledBy([...this.inFlight.keys()], deadline))) await this.releaseLeases();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  private async releaseLeases() {
    const ids = [...this.inFlight.values()].flat();
    log.warn({ deliveries: ids.length }, "webhook worker: stopping with attempts in flight; releasing their leases");
    try {
      const db = await getDb();
      await db.$executeRawUnsafe(
        RELEASE_LEASES_SQL,
        ids,
        ids.filter((id) => this.unsent.has(id)),
      );
    } catch (err) {
      log.error({ error: err }, "webhook worker: could not release leases; they expire on their own");
    }
  }

  /** New work may be due: claim at once. */
  wake(): void {
    this.newWork = true;
    this.rouse();
  }

  private rouse() {
    this.wakePending = true;
    this.wakeSleeper?.();
  }

  /** Places free for the next claim: attempts answered with a success no longer count (see `succeeded`). */
  private freePlaces() {
    return this.concurrency - this.inFlight.size + this.succeeded.size;
  }

  /** Whether the next claim may run: no gathering, or enough places freed since the last claim, or its time is up. */
  private gathered() {
    return !this.gathering || this.freePlaces() - this.placesClaiming - this.freeAfterClaim >= this.gatherPlaces || Date.now() >= this.gatherUntil;
  }

  /** An attempt's place may be free: the loop claims again once enough have gathered (see GATHER_SHARE). */
  private placeFreed() {
    if (this.gathered()) this.rouse();
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

  /**
   * Keeps a LISTEN connection open (cross-process wake-ups). When it is lost it reconnects with
   * backoff for as long as the worker runs, and wakes the worker once it is back (deliveries
   * written meanwhile were only announced to the lost connection). Resolves after the first try.
   * On the direct URL: LISTEN is a session's, which a transaction-mode pooler would not keep.
   */
  private listen(): Promise<void> {
    const client = new pg.Client({ connectionString: directDatabaseUrl(), connectionTimeoutMillis: 5_000 });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      void client.end().catch(() => {});
      if (!this.running) return;
      if (this.listenFailures++ === 0) {
        log.warn({ error: err ?? "connection ended" }, "webhook worker: LISTEN connection lost; polling until it reconnects");
      }
      const delay = Math.min(100 * 2 ** (this.listenFailures - 1), LISTEN_RETRY_MAX_MS) * (0.5 + Math.random() / 2);
      this.listenRetry = setTimeout(() => void this.listen(), delay);
      this.listenRetry.unref();
    };
    client.on("notification", () => this.wake());
    client.on("error", onLost);
    client.on("end", () => onLost());
    return client
      .connect()
      .then(() => client.query(`LISTEN ${OUTBOX_CHANNEL}`))
      .then(() => {
        if (lost) return;
        if (!this.running) return void onLost();
        this.listener = client;
        if (this.listenFailures) {
          log.info("webhook worker: LISTEN connection restored");
          this.wake();
        }
        this.listenFailures = 0;
      }, onLost);
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

  private async loop(db: PrismaClient, sql: SqlRunner, claimRunner: SqlRunner) {
    while (this.running) {
      this.wakePending = false;
      const capacity = this.freePlaces() - this.placesClaiming;
      // Beside a claim on its way, only new work or a gathered share of places (never the time
      // bound: under load, claims sent one freed place at a time would cost more than they bring).
      const mayClaim = this.claims.size
        ? this.claims.size < this.claimsAtOnce && (this.newWork || capacity >= this.gatherPlaces)
        : this.newWork || this.gathered();
      if (capacity > 0 && mayClaim) {
        this.newWork = false;
        this.startClaim(db, sql, claimRunner, capacity);
      }
      // Gathering: claim again by gatherUntil at the latest. Otherwise a freed place, a claim's
      // answer, new work or the poll wakes it.
      const gatherMs = this.gatherUntil - Date.now();
      await this.sleep(this.gathering && gatherMs > 0 ? Math.min(gatherMs, this.pollIntervalMs) : this.pollIntervalMs);
    }
    // Deliveries a claim still on its way leases are tracked (and so sent, or released by stop).
    await Promise.allSettled(this.claims);
  }

  /**
   * Sends a claim for `capacity` places, not awaited: while it is on its way the loop may send the
   * next one (see CLAIMS_AT_ONCE), its places reserved until it answers.
   */
  private startClaim(db: PrismaClient, sql: SqlRunner, claimRunner: SqlRunner, capacity: number) {
    const claimedAt = Date.now();
    // Never its own attempts again, even past their lease (a stalled event loop): only another
    // process may. A claim still on its way has committed its leases before this one starts (the
    // claim runner runs its statements one at a time, in order), so its deliveries are not due.
    const own = [...this.inFlight.values()].flat().join(",");
    const args = this.paced
      ? [capacity, this.leaseMs, own, PACE_HORIZON_MS, ...fairnessLimits(), [...this.succeeded].join(",")]
      : [capacity, this.leaseMs, own];
    this.placesClaiming += capacity;
    // Until it answers, the next claim gathers places freed from now on (this one took those free).
    this.gathering = true;
    this.freeAfterClaim = 0;
    this.gatherUntil = claimedAt + GATHER_MS;
    const claim: Promise<void> = claimRunner<ClaimRow>(this.claim, args).then(
      (rows) => {
        this.claimFailing = false;
        this.answered(claim, capacity);
        const claimed = rows.filter(isClaimed);
        if (claimed.length) this.track(db, sql, claimed, claimedAt);
        // What it left alone may have room: the next claim, with a fresh snapshot, looks at once
        // (nothing else may wake this worker before the poll).
        if (rows[0]?.changed_skipped) this.newWork = true;
        // A full batch suggests more is due: look again at once (capacity permitting); a short one
        // gathers freed places first, until claimedAt + GATHER_MS at most (the loop's sleep).
        this.gathering = claimed.length < capacity;
        this.gatherUntil = claimedAt + GATHER_MS;
        this.freeAfterClaim = this.freePlaces() - this.placesClaiming;
        if (!this.gathering || this.newWork) this.rouse();
      },
      (err) => {
        this.answered(claim, capacity);
        this.gathering = false;
        this.freeAfterClaim = this.freePlaces() - this.placesClaiming;
        // Unavailable: tried again soon (or at a wake-up before); otherwise at the poll, as any claim.
        if (this.logClaimFailure(err) && this.running) this.wakeIn(CLAIM_RETRY_MS);
      },
    );
    this.claims.add(claim);
  }

  /** A claim answered: its places are no longer reserved. */
  private answered(claim: Promise<void>, capacity: number) {
    this.claims.delete(claim);
    this.placesClaiming -= capacity;
  }

  /**
   * An outage fails every poll: said once until a claim works again, not once a second. True when
   * the database was unavailable, the claim's connection lost mid-statement included (its outcome
   * unknown: any rows it leased come back when the lease ends).
   */
  private logClaimFailure(err: unknown): boolean {
    if (!isDatabaseUnavailable(err) && !(err instanceof DatabaseOutcomeUnknownError)) {
      log.error({ error: err }, "webhook worker: claim failed");
      return false;
    }
    if (!this.claimFailing) log.warn({ error: err }, "webhook worker: database unavailable; claiming again when it is back");
    this.claimFailing = true;
    return true;
  }

  /**
   * `claimedAt`: epoch ms when the claim was sent (its answer has just arrived). The claim runs out
   * a lease after it, or after the slot (the attempt must be recorded before).
   */
  private track(db: PrismaClient, sql: SqlRunner, claimed: Claimed[], claimedAt: number) {
    const leaseEnds = claimedAt + this.leaseMs;
    const answeredAt = Date.now();
    const runs: [Promise<void>, string[]][] = this.options.handle
      ? [[this.options.handle(db, claimed), claimed.map((c) => c.delivery_id)]]
      : claimed.map((target) => [
          this.attempt(db, sql, target, sendSlot(claimedAt, target.wait_ms), leaseEnds + target.wait_ms, answeredAt),
          [target.delivery_id],
        ]);
    for (const [run, ids] of runs) {
      const p = run
        .catch((err) => log.error({ delivery_ids: ids, error: err }, "webhook worker: attempt failed unexpectedly"))
        .finally(() => {
          this.inFlight.delete(p);
          this.placeFreed();
        });
      this.inFlight.set(p, ids);
    }
  }

  /**
   * The subscription's rate limit: the claim gave this delivery a send slot, shared with every other
   * process. It is sent at its slot, after this process's earlier deliveries to the same subscription
   * have taken their turn (so they go out in claim order), and never more than LATE_SEND_MS after it:
   * a send that late (a stall, a slow start, a loaded machine, a slow claim answer) is sent at a new
   * slot instead. The slots are spaced PACE_MARGIN wider than 1/rate, more than that lateness, so
   * whatever each process's timing, no second at the consumer holds more than `rate` sends.
   *
   * What is measured against what (SendSlot): the claim says how long until the slot as of some
   * moment while it ran, so in this process's clock the slot lies between the claim's sending
   * (`claimedAt`) plus `wait_ms` and its answer's arrival plus `wait_ms`. A send waits until the later
   * (never early) and counts its lateness from the earlier (sendIsLate): a claim's round trip counts
   * toward it, so a slow answer cannot stretch a send past its slot by LATE_SEND_MS plus the round
   * trip. New slots alike, from just before their statement was sent. Lateness never accumulates
   * along a lane: each send is measured against its own slot. A late send takes new slots in one
   * statement for itself and for the sends queued behind it whose slots have passed too (they would be
   * late in turn, each waiting on a statement of its own); they use them when their own is too late.
   */
  private takeTurn(sql: SqlRunner, target: Claimed, slot: SendSlot): Promise<void> | undefined {
    // Its slot has come (and it is not late) with no earlier send of this process waiting on the
    // subscription: it goes now, without a turn's promise or timer (the common case under load).
    if (slot.at <= Date.now() && !sendIsLate(slot)) {
      const lane = this.lanes.get(target.subscription_id);
      if (!lane?.dues.length) {
        if (lane) lane.lastSentAt = Date.now();
        return undefined;
      }
    }
    return this.waitTurn(sql, target, slot);
  }

  /** takeTurn's wait: behind this process's earlier sends to the subscription, then for its slot (see SendSlot). */
  private async waitTurn(sql: SqlRunner, target: Claimed, claimedSlot: SendSlot): Promise<void> {
    let slot = claimedSlot;
    const lane = this.lanes.get(target.subscription_id) ?? { tail: Promise.resolve(), lastSentAt: 0, dues: [], spare: [] };
    const previous = lane.tail;
    let taken!: () => void;
    lane.tail = new Promise<void>((resolve) => (taken = resolve));
    if (this.lanes.size > 10_000) this.forgetIdleLanes();
    this.lanes.set(target.subscription_id, lane);
    lane.dues.push(slot);
    try {
      await previous;
      for (let tries = 0; ; tries++) {
        const sleepMs = slot.at - Date.now();
        if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
        if (!sendIsLate(slot) || tries >= 3) break;
        while (lane.spare.length && sendIsLate(lane.spare[0])) lane.spare.shift();
        const spare = lane.spare.shift();
        if (spare !== undefined) {
          slot = spare;
          continue;
        }
        const askedAt = Date.now();
        const count = 1 + lane.dues.slice(1).filter((d) => d.from <= askedAt).length;
        // Not taken (the database unavailable): sent now, as a send on time would be.
        const slots = await reserveSendSlots(sql, target.delivery_id, count).catch(() => null);
        // That far off, the endpoint was paused (a 429) after this claim: the claimed slot stands.
        if (!slots || slots.waitMs > MAX_RESLOT_WAIT_MS) break;
        const first = sendSlot(askedAt, slots.waitMs);
        slot = first;
        lane.spare = Array.from({ length: count - 1 }, (_, i) => slotAfter(first, (i + 1) * slots.gapMs));
      }
    } finally {
      lane.dues.shift();
      lane.lastSentAt = Date.now();
      taken();
    }
  }

  /** Lanes idle for over a second say nothing any more (every gap is at most 1 s). */
  private forgetIdleLanes() {
    for (const [id, lane] of this.lanes) if (!lane.dues.length && Date.now() - lane.lastSentAt > 1000) this.lanes.delete(id);
  }

  /** A held send (see GIVE_BACK_HELD_SQL); the worker looks again when the hold ends. */
  private async giveBackHeld(db: PrismaClient, target: Claimed, heldMs: number) {
    try {
      await db.$executeRawUnsafe(
        GIVE_BACK_HELD_SQL,
        target.delivery_id,
        target.cycle,
        target.attempt_count,
        target.possible_repeat ?? false,
        Math.ceil(heldMs),
      );
    } catch (err) {
      // Its lease runs out on its own: another claim takes it then (the hold is on the row).
      log.warn({ delivery_id: target.delivery_id, error: err }, "webhook worker: could not give back a held delivery's lease");
    }
    this.wakeIn(heldMs + 5);
  }

  private async attempt(db: PrismaClient, sql: SqlRunner, target: Claimed, slot: SendSlot, leaseEnds: number, answeredAt: number) {
    this.unsent.add(target.delivery_id);
    let result: Awaited<ReturnType<typeof attemptDelivery>>;
    try {
      const turn = this.paced ? this.takeTurn(sql, target, slot) : undefined;
      if (turn) await turn;
      // A consumer's Retry-After answered since the claim holds this send too: one answered here is
      // known at once; one another process recorded is read from the row by a send going long enough
      // after its claim's answer for it to matter (a sooner one relies on the claim's own reading;
      // at 1,000/s, as in the bench, a claim's sends all go sooner).
      let heldMs = heldFor(target.subscription_id);
      // (This process's own 429 may have been answered while the row was being read.)
      if (!heldMs && this.paced && Date.now() - answeredAt > HOLD_RECHECK_AFTER_MS)
        heldMs = (await readHold(sql, target.subscription_id)) || heldFor(target.subscription_id);
      if (heldMs > 0) return await this.giveBackHeld(db, target, heldMs);
      // A margin under the lease: the record must land before another worker may claim the delivery.
      result = await attemptDelivery(db, target, {
        recordBy: leaseEnds - RECORD_MARGIN_MS,
        onWritten: () => this.unsent.delete(target.delivery_id),
        // Its place is free at once: the next claim may fill it while the success is being recorded.
        onSucceeded: () => {
          this.succeeded.add(target.delivery_id);
          this.placeFreed();
        },
        sql,
      });
    } finally {
      this.unsent.delete(target.delivery_id);
      this.succeeded.delete(target.delivery_id);
    }
    // The retry is due at the database's now() + delay; a few ms of margin so the claim finds it.
    if (result.recorded && result.status === "pending" && result.nextDelayMs !== null) this.wakeIn(result.nextDelayMs + 5);
  }
}

/** Resolves true when all `runs` settled before `deadline` (epoch ms), false when it passed first. */
async function settledBy(runs: Promise<void>[], deadline: number): Promise<boolean> {
  if (!runs.length) return true;
  if (deadline === Infinity) return Promise.allSettled(runs).then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  const all = Promise.allSettled(runs).then(() => true as const);
  try {
    return await Promise.race([all, late]);
  } finally {
    clearTimeout(timer);
  }
}

let processWorker: DeliveryWorker | undefined;

/** Starts this process's embedded worker (idempotent). */
export async function startEmbeddedWorker(options?: WorkerOptions): Promise<DeliveryWorker> {
  processWorker ??= new DeliveryWorker(options);
  await processWorker.start();
  return processWorker;
}

/** Stops this process's embedded worker; see `DeliveryWorker.stop` for `deadline`. */
export async function stopEmbeddedWorker(deadline?: number): Promise<void> {
  const worker = processWorker;
  processWorker = undefined;
  await worker?.stop(deadline);
}
