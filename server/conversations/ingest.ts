// Ingest: an inbound message from a provider becomes the customer's message in their conversation,
// in ONE statement (one round trip, one transaction), whether the customer is known or new:
//   - the channel connection the receiver verified the signature with is checked to be still
//     active with the same credentials (else nothing is stored: `StaleConnectionError`, and the
//     receiver looks the connection up again, see server/receivers/connection-gate.ts);
//   - the conversation of (tenant, channel, normalized customer identifier) is locked (FOR UPDATE)
//     and counted, and reopened if closed; or, for a new pair, inserted (the rule of
//     `POST /conversations`: unique on the pair, ON CONFLICT DO NOTHING) together with its
//     `conversation.created` event and the event's webhook deliveries (the outbox's own fan-out,
//     `eventFanOutSql`);
//   - the message is stored (inbound, customer, received), idempotent on (tenant, provider,
//     provider message id): a retried delivery inserts nothing, counts nothing, emits nothing.
// Of two processes receiving a new customer's first messages at once, one inserts the pair; the
// other's insert waits for it to commit, inserts nothing, and that message then takes the
// existing-conversation path (the statement again): exactly one `conversation.created`.
// What ingest locks: the conversation's row (FOR UPDATE, or the new row it inserts), then, through
// the messages' trigger, the day's counter row; in that order on every path (sendMessage and
// POST /conversations too), so deliveries of one conversation wait in turn and never deadlock.
import { randomUUID } from "node:crypto";
import { databaseKind, getSql, sqlIfOpen, type Statement } from "../db/client";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { eventFanOutSql, eventOrigin, wakeDeliveryWorkersSql } from "../outbox/emit-event";
import { OUTBOX_CHANNEL, signalOutboxWrite } from "../outbox/outbox-signal";
import type { TenantTx } from "../db/tenant-scope";
import { conversationToWire, type ConversationRow, type MessageRow } from "./conversations.service";
import { CONVERSATION_EVENTS } from "./conversations.events";
import { AppError, badRequest } from "../lib/errors";
import type { Channel } from "../lib/conversation-channels";
import { MAX_SENDER_LENGTH, senderIdentifier } from "../lib/sender-identifier";
import type { ChannelProvider } from "../channels/providers";
import { connectionIsCurrentSql, StaleConnectionError, type ConnectionCheck } from "../channels/channel-connections";

export type InboundMessage = {
  provider: ChannelProvider;
  /** The provider's id of this message: what makes a retried delivery a duplicate. */
  providerMessageId: string;
  channel: Extract<Channel, "sms" | "whatsapp">;
  /** The sender as the provider sent it: stored in E.164 when it is a number, else as sent (server/lib/sender-identifier.ts). */
  from: string;
  /** The sender written as a number, when the provider writes it otherwise (WhatsApp's wa_id, digits without `+`). */
  fromNumber?: string;
  /** A display name the provider knows (WhatsApp profile name), used when the conversation is new. */
  customerName?: string | null;
  body: string;
};

/** What the statement answers: only what a receiver (and its tests) need. */
export type IngestResult = {
  /** The conversation the message is in; null only for a duplicate stored in a conversation that is no longer the pair's (its customer erased since). */
  conversationId: string | null;
  conversationCreated: boolean;
  /** False when this delivery was a duplicate of a message already stored. */
  stored: boolean;
};

// The statement's column names come from the model (server/db/columns.ts).
const CONVERSATION = modelColumns(Prisma.ConversationScalarFieldEnum);
const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);

// The statements' parts. $1 tenant, $2 connection id (null: no check, for in-process callers), $3
// its sealed credentials, $4 channel, $5 customer identifier, $6 body, $7 provider, $8 provider
// message id, $9 the time.
const GATE = `gate AS (
  SELECT ($2::uuid IS NULL OR ${connectionIsCurrentSql({ id: "$2::uuid", tenant: "$1::uuid", sealed: "$3::text" })}) AS ok
), found AS (
  SELECT c.${CONVERSATION.id} FROM ${TABLE.Conversation} c, gate
  WHERE gate.ok AND c.${CONVERSATION.tenantId} = $1::uuid AND c.${CONVERSATION.channel} = $4::text AND c.${CONVERSATION.customerIdentifier} = $5::text
  FOR UPDATE OF c
)`;
// Only an existing conversation (`found`, at most one row) is counted here: a new one is inserted
// counted. Its id is a scalar subquery, so the update is one primary-key lookup whatever the plan
// (a join with the CTE let a generic plan scan the tenant's conversations); and it names no tenant
// (the id comes from `found`, the tenant's): with `tenant_id = $1` beside it, a generic plan made
// while the table had no statistics read the id as a filter over a (tenant_id, …) index.
const STORE_AND_COUNT = (target: string) => `stored AS (
  INSERT INTO ${TABLE.Message} (${MESSAGE.id}, ${MESSAGE.tenantId}, ${MESSAGE.conversationId}, ${MESSAGE.direction}, ${MESSAGE.author}, ${MESSAGE.body}, ${MESSAGE.status}, ${MESSAGE.provider}, ${MESSAGE.providerMessageId}, ${MESSAGE.createdAt})
  SELECT gen_random_uuid(), $1::uuid, ${target}.${CONVERSATION.id}, 'inbound', 'customer', $6::text, 'received', $7::text, $8::text, $9::timestamptz FROM ${target}
  ON CONFLICT (${MESSAGE.tenantId}, ${MESSAGE.provider}, ${MESSAGE.providerMessageId}) DO NOTHING
  RETURNING ${MESSAGE.conversationId}
), counted AS (
  UPDATE ${TABLE.Conversation} c SET ${CONVERSATION.lastMessageAt} = $9::timestamptz, ${CONVERSATION.lastActivityAt} = $9::timestamptz, ${CONVERSATION.messageCount} = c.${CONVERSATION.messageCount} + 1,
    ${CONVERSATION.status} = CASE WHEN c.${CONVERSATION.status} = 'closed' THEN 'open' ELSE c.${CONVERSATION.status} END,
    ${CONVERSATION.closedAt} = CASE WHEN c.${CONVERSATION.status} = 'closed' THEN NULL ELSE c.${CONVERSATION.closedAt} END, ${CONVERSATION.updatedAt} = now()
  WHERE c.${CONVERSATION.id} = (SELECT ${CONVERSATION.id} FROM found) AND EXISTS (SELECT 1 FROM stored)
  RETURNING c.${CONVERSATION.id}
)`;

/**
 * A message to a pair this process has seen a conversation for: the connection checked, the
 * conversation locked, the message stored once and counted. No conversation (it was removed
 * meanwhile): nothing stored, and INGEST runs.
 */
export const CONTINUE: Statement = {
  text: `WITH ${GATE}, ${STORE_AND_COUNT("found")}
SELECT gate.ok, (SELECT ${CONVERSATION.id}::text FROM found) AS "conversationId", EXISTS (SELECT 1 FROM stored) AS stored FROM gate`,
};

/** The SQLSTATE INGEST raises when the message it created a conversation for is stored already. */
const STORED_ELSEWHERE = "TDP01";

/**
 * Any message, known pair or new: CONTINUE's work, or for a new pair the conversation (inserted
 * already counted, as its message is inserted with it), its `conversation.created` and the event's
 * deliveries. Beyond CONTINUE's: $10 a new conversation's id, $11 its customer name, $12 its
 * `conversation.created` data, $13 whether to NOTIFY (PostgreSQL), $14 and $15 the event's origin
 * (the request and its trace, `eventOrigin()`), $16 how its customer identifier was stored
 * (`normalized`, or `as_sent` for a sender that is no phone number).
 *
 * Whether the message is stored already is answered by the message insert's own conflict check on
 * the (tenant, provider, provider message id) key, the only way the statement reads messages: a
 * separate lookup could be planned through the tenant's (created_at, direction) index, as equally
 * cheap while the table has no statistics, and a prepared statement keeps that plan (it read all
 * the tenant's messages per new customer; docs/perf/2026-11-ingest.md). A new pair's conversation is inserted
 * before its message (the message refers to it); when the message then turns out to be stored
 * already (a retry of a message whose customer was erased since, whose conversation now has another
 * identifier), the statement raises STORED_ELSEWHERE, which undoes the conversation, its event and
 * its deliveries: a retried delivery creates nothing.
 */
export const INGEST: Statement = {
  text: `WITH ${GATE}, created AS (
  INSERT INTO ${TABLE.Conversation} (${CONVERSATION.id}, ${CONVERSATION.tenantId}, ${CONVERSATION.channel}, ${CONVERSATION.customerIdentifier}, ${CONVERSATION.customerName},
    ${CONVERSATION.status}, ${CONVERSATION.attributes}, ${CONVERSATION.lastMessageAt}, ${CONVERSATION.lastActivityAt}, ${CONVERSATION.messageCount},
    ${CONVERSATION.createdAt}, ${CONVERSATION.updatedAt}, ${CONVERSATION.customerIdentifierKind})
  SELECT $10::uuid, $1::uuid, $4::text, $5::text, $11::text, 'open', '{}'::jsonb, $9::timestamptz, $9::timestamptz, 1, $9::timestamptz, $9::timestamptz, $16::text
  FROM gate WHERE gate.ok AND NOT EXISTS (SELECT 1 FROM found)
  ON CONFLICT (${CONVERSATION.tenantId}, ${CONVERSATION.channel}, ${CONVERSATION.customerIdentifier}) DO NOTHING
  RETURNING ${CONVERSATION.id}
), ${eventFanOutSql({ tenant: "$1::uuid", type: "'conversation.created'", data: "$12::text::jsonb", origin: { requestId: "$14::text", traceParent: "$15::text" }, source: "created" })},
target AS (SELECT ${CONVERSATION.id} FROM found UNION ALL SELECT ${CONVERSATION.id} FROM created
), ${STORE_AND_COUNT("target")}, fanned AS (SELECT count(*)::int AS n FROM deliveries)
SELECT gate.ok, (SELECT ${CONVERSATION.id}::text FROM target) AS "conversationId",
  CASE WHEN NOT EXISTS (SELECT 1 FROM created) THEN false WHEN EXISTS (SELECT 1 FROM stored) THEN true
    ELSE raise_sqlstate('${STORED_ELSEWHERE}', 'ingest: the message is stored already, in another conversation: nothing is created') END AS created,
  EXISTS (SELECT 1 FROM stored) AS stored, fanned.n AS deliveries, (${wakeDeliveryWorkersSql("fanned.n > 0", "$13::boolean")})::text AS notified
FROM gate, fanned`,
};

/**
 * The pairs this process has stored a message for (tenant, channel, identifier), so their next
 * message takes CONTINUE: lighter for PostgreSQL than INGEST, whose inserts (and their statement
 * triggers) run even when they write nothing. Only a hint: a pair missing here takes INGEST, one
 * whose conversation is gone falls back to it. Bounded: past the limit the oldest goes.
 */
const knownPairs = new Set<string>();
const MAX_KNOWN_PAIRS = 100_000;
function rememberPair(pair: string) {
  if (knownPairs.has(pair)) return;
  if (knownPairs.size >= MAX_KNOWN_PAIRS) knownPairs.delete(knownPairs.values().next().value!);
  knownPairs.add(pair);
}

/**
 * The other processes' delivery workers are woken by NOTIFY, and every notifying commit takes one
 * cluster-wide lock (PostgreSQL serializes them, every database of the server included) until it has
 * committed: one per new customer made the receiver's commits queue behind each other's and behind
 * any other notifier on the server. So a process notifies from the statement at most once per
 * window; a statement that wrote deliveries inside the window leaves a wake-up owed, sent as a NOTIFY
 * of its own when the window ends (after that statement committed: it is owed only once it answered).
 * This process's own worker is woken at once (`signalOutboxWrite`), and workers also poll.
 */
const NOTIFY_WINDOW_MS = 20;
let lastNotifyAt = Number.NEGATIVE_INFINITY;
let owedWake: ReturnType<typeof setTimeout> | null = null;
function notifyFromStatement(): boolean {
  const now = performance.now();
  if (now - lastNotifyAt < NOTIFY_WINDOW_MS) return false;
  lastNotifyAt = now;
  return true;
}
function owePeerWake() {
  if (owedWake) return;
  owedWake = setTimeout(
    () => {
      owedWake = null;
      lastNotifyAt = performance.now();
      const sql = sqlIfOpen();
      // Best effort: a wake-up lost here is found by the workers' poll.
      sql?.({ text: `SELECT pg_notify('${OUTBOX_CHANNEL}', '')` }, []).catch(() => {});
    },
    Math.max(0, lastNotifyAt + NOTIFY_WINDOW_MS - performance.now()),
  );
  owedWake.unref?.();
}

type IngestRow = { ok: boolean; conversationId: string | null; created: boolean; stored: boolean; deliveries: number };

const checkCreated = CONVERSATION_EVENTS["conversation.created"];

/** `conversation.created`'s data for the pair's new conversation, as the row is when created (before its first message is counted, as POST /conversations' is). */
function createdEventData(row: ConversationRow): string {
  return JSON.stringify(checkCreated.parse({ object: conversationToWire(row) }));
}

/**
 * Stores an inbound message in one statement (see the top of this file). `connection`: the
 * connection whose credentials verified the request; when it changed meanwhile nothing is stored
 * and `StaleConnectionError` is thrown. Null only for in-process callers that verified nothing.
 */
export async function ingestInboundMessage(db: { tenantId: string }, input: InboundMessage, connection: ConnectionCheck | null = null): Promise<IngestResult> {
  const { tenantId } = db;
  // A provider-verified sender is never refused for its format (only a blank or oversized one is).
  const sender = senderIdentifier(input.from, input.fromNumber);
  if (!sender) throw badRequest(`invalid field 'from': must be 1 to ${MAX_SENDER_LENGTH} characters`, "from");
  const customerIdentifier = sender.identifier;
  const sql = sqlIfOpen() ?? (await getSql());
  const postgres = databaseKind() === "postgres";
  const pair = `${tenantId} ${input.channel} ${customerIdentifier}`;
  const connectionId = connection?.id ?? null;
  const sealed = connection?.credentialsEncrypted ?? null;
  // $1–$9, the same in both statements: the tenant, the connection to check, the pair and the message.
  const messageParams = (at: Date) => [
    tenantId,
    connectionId,
    sealed,
    input.channel,
    customerIdentifier,
    input.body,
    input.provider,
    input.providerMessageId,
    at.toISOString(),
  ];
  if (knownPairs.has(pair)) {
    const [result] = await sql<{ ok: boolean; conversationId: string | null; stored: boolean }>(CONTINUE, messageParams(new Date()));
    if (!result.ok) throw new StaleConnectionError();
    if (result.conversationId !== null) return { conversationId: result.conversationId, conversationCreated: false, stored: result.stored };
    knownPairs.delete(pair);
  }
  // A pair created by another transaction after this statement's snapshot is found by the next
  // run (its insert waited for that commit, so the next snapshot sees it): a second run at most,
  // short of an erasure removing the conversation in between.
  for (let attempt = 0; ; attempt++) {
    const at = new Date();
    const row: ConversationRow = {
      id: randomUUID(),
      tenantId,
      channel: input.channel,
      customerIdentifier,
      customerIdentifierKind: sender.kind,
      customerName: input.customerName ?? null,
      status: "open",
      summary: null,
      attributes: {},
      lastMessageAt: null,
      lastActivityAt: at,
      messageCount: 0,
      closedAt: null,
      handoffStartedAt: null,
      slaBreachedAt: null,
      createdAt: at,
      updatedAt: at,
    };
    const notify = postgres && notifyFromStatement();
    const [result] = await sql<IngestRow>(INGEST, [
      ...messageParams(at),
      row.id,
      row.customerName,
      createdEventData(row),
      notify,
      ...eventOrigin(),
      sender.kind,
    ]).catch((error: unknown) => {
      // A duplicate of a message stored in another conversation: nothing was stored or created.
      if ((error as { code?: unknown } | null)?.code === STORED_ELSEWHERE) return [null];
      throw error;
    });
    if (result === null) return { conversationId: null, conversationCreated: false, stored: false };
    if (!result.ok) throw new StaleConnectionError();
    if (result.deliveries > 0) {
      signalOutboxWrite();
      if (postgres && !notify) owePeerWake();
    }
    if (result.conversationId !== null) {
      rememberPair(pair);
      return { conversationId: result.conversationId, conversationCreated: result.created, stored: result.stored };
    }
    // Never answer as stored what was not: the provider delivers it again.
    if (attempt >= 3) throw new AppError("internal_error", "the conversation is changing; retry", { status: 503, headers: { "Retry-After": "1" } });
  }
}

/**
 * A burst for one customer queues on their conversation's row, and a burst larger than the pool
 * queues for a connection: waiting longer than Prisma's default 2 s is better than failing a
 * delivery the provider would only send again (the calls' transactions, server/calls).
 */
export const INGEST_TRANSACTION = { maxWait: 10_000, timeout: 20_000 } as const;

type NewMessage = Omit<MessageRow, "id" | "sendClaimedUntil">;

/**
 * Inserts messages that carry a provider id, skipping any already stored (ON CONFLICT DO NOTHING on
 * the (tenant, provider, provider message id) key, so concurrent deliveries of one message store it
 * once: the others wait for the first to commit, then insert nothing). Returns the rows inserted.
 */
export function insertMessagesOnce(tx: TenantTx, rows: NewMessage[]): Promise<MessageRow[]> {
  return tx.message.createManyAndReturn({ data: rows, skipDuplicates: true });
}

/** A customer writing again reopens a closed conversation (a handoff stays a handoff). */
export async function reopenIfClosed(tx: TenantTx, conversation: { id: string; status: string }) {
  if (conversation.status !== "closed") return;
  await tx.conversation.updateMany({ where: { id: conversation.id, status: "closed" }, data: { status: "open", closedAt: null } });
}
