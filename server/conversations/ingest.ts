// Ingest: an inbound message from a provider becomes the customer's message in their conversation.
// One transaction: the conversation of (tenant, channel, normalized customer identifier) is found
// or created by the same rule as `POST /conversations` (a new pair emits `conversation.created`),
// the message is stored (inbound, customer, received) and counted, and a closed conversation is
// reopened. Idempotent on (tenant, provider, provider message id): a retried delivery inserts
// nothing (ON CONFLICT DO NOTHING), so it counts nothing and emits nothing a second time.
import { getSql, sqlIfOpen } from "../db/client";
import { modelColumns } from "../db/columns";
import { Prisma } from "../db/generated/client";
import { lockTenantRow } from "../db/lock-row";
import { scopeSqlToTenant, type TenantDb, type TenantTx } from "../db/tenant-scope";
import { conversationRow, countNewMessages, findOrCreateConversation, type ConversationRow, type MessageRow } from "./conversations.service";
import { normalizeCustomerIdentifier, type Channel } from "../lib/customer-identifier";
import type { ChannelProvider } from "../channels/providers";

export type InboundMessage = {
  provider: ChannelProvider;
  /** The provider's id of this message: what makes a retried delivery a duplicate. */
  providerMessageId: string;
  channel: Extract<Channel, "sms" | "whatsapp">;
  /** The customer's identifier as the provider sent it (normalized here, e.g. to E.164). */
  from: string;
  /** A display name the provider knows (WhatsApp profile name), used when the conversation is new. */
  customerName?: string | null;
  body: string;
};

export type IngestResult = {
  conversation: ConversationRow;
  conversationCreated: boolean;
  /** The stored message; null when this delivery was a duplicate of one already stored. */
  message: MessageRow | null;
};

/**
 * A burst for one customer queues on their conversation's row, and a burst larger than the pool
 * queues for a connection: waiting longer than Prisma's default 2 s is better than failing a
 * delivery the provider would only send again.
 */
export const INGEST_TRANSACTION = { maxWait: 10_000, timeout: 20_000 } as const;

export async function ingestInboundMessage(db: TenantDb, input: InboundMessage): Promise<IngestResult> {
  const { tenantId } = db;
  const customerIdentifier = normalizeCustomerIdentifier(input.channel, input.from);
  // Most inbound messages continue a conversation: one statement stores and counts them. A new pair
  // (or one created by a transaction not yet committed) takes the find-or-create transaction.
  const continued = await ingestIntoExistingConversation(tenantId, input, customerIdentifier);
  if (continued) return continued;
  // A burst from a new customer: the first message creates the conversation, the others of this
  // process wait for it and continue it in one statement instead of each queueing a transaction
  // (and a pooled connection) behind the first's insert of the pair.
  const pair = `${tenantId} ${input.channel} ${customerIdentifier}`;
  const creating = creatingPairs.get(pair);
  if (creating) {
    await creating.catch(() => {});
    const after = await ingestIntoExistingConversation(tenantId, input, customerIdentifier);
    if (after) return after;
  }
  const work = ingestInTransaction(db, tenantId, input, customerIdentifier);
  if (!creatingPairs.has(pair)) {
    creatingPairs.set(pair, work);
    void work.catch(() => {}).finally(() => creatingPairs.get(pair) === work && creatingPairs.delete(pair));
  }
  return work;
}

/** The pairs whose conversation this process is finding or creating in a transaction right now. */
const creatingPairs = new Map<string, Promise<IngestResult>>();

function ingestInTransaction(db: TenantDb, tenantId: string, input: InboundMessage, customerIdentifier: string): Promise<IngestResult> {
  return db.$transaction(async (tx) => {
    const { row, created } = await findOrCreateConversation(tx, { channel: input.channel, customerIdentifier, customerName: input.customerName });
    // The conversation's lock before the message (whose insert locks the day's counter row): the
    // order the one-statement path takes too, so the two can never deadlock.
    if (!created) await lockTenantRow(tx, "conversations", row.id);
    const at = new Date();
    const message = await insertOnce(tx, {
      tenantId,
      conversationId: row.id,
      direction: "inbound",
      author: "customer",
      body: input.body,
      status: "received",
      provider: input.provider,
      providerMessageId: input.providerMessageId,
      createdAt: at,
    });
    if (!message) return { conversation: row, conversationCreated: created, message: null };
    await reopenIfClosed(tx, row);
    const conversation = await countNewMessages(tx, row.id, at);
    return { conversation, conversationCreated: created, message };
  }, INGEST_TRANSACTION);
}

// The statements' column names come from the model (server/db/columns.ts).
const CONVERSATION = modelColumns(Prisma.ConversationScalarFieldEnum);
const MESSAGE = modelColumns(Prisma.MessageScalarFieldEnum);

/**
 * The message inserted once (ON CONFLICT DO NOTHING on the provider id) into the pair's existing
 * conversation, which is counted (`countNewMessages`' columns) and reopened if closed, all in one
 * statement (one round trip, on the pipelined statement connections). The conversation is locked
 * first (FOR UPDATE, as the transaction path and `sendMessage` lock it), then the message inserted
 * (its trigger then takes the day's counter row): one lock order on every path, so concurrent
 * deliveries of one conversation wait in turn and never deadlock. Returns the conversation as it is
 * after the statement (counted or, for a duplicate delivery, as found), or no row when the pair
 * has no committed conversation.
 */
const INGEST_INTO_EXISTING = {
  text: `WITH found AS (
    SELECT * FROM conversations WHERE ${CONVERSATION.tenantId} = $1 AND ${CONVERSATION.channel} = $2 AND ${CONVERSATION.customerIdentifier} = $3 FOR UPDATE
  ), stored AS (
    INSERT INTO messages (${MESSAGE.id}, ${MESSAGE.tenantId}, ${MESSAGE.conversationId}, ${MESSAGE.direction}, ${MESSAGE.author}, ${MESSAGE.body}, ${MESSAGE.status}, ${MESSAGE.provider}, ${MESSAGE.providerMessageId}, ${MESSAGE.createdAt})
    SELECT gen_random_uuid(), $1, found.${CONVERSATION.id}, 'inbound', 'customer', $4, 'received', $5, $6, $7::timestamptz FROM found
    ON CONFLICT (${MESSAGE.tenantId}, ${MESSAGE.provider}, ${MESSAGE.providerMessageId}) DO NOTHING
    RETURNING ${MESSAGE.id}, ${MESSAGE.conversationId}
  ), counted AS (
    UPDATE conversations c SET ${CONVERSATION.lastMessageAt} = $7::timestamptz, ${CONVERSATION.lastActivityAt} = $7::timestamptz, ${CONVERSATION.messageCount} = c.${CONVERSATION.messageCount} + 1,
      ${CONVERSATION.status} = CASE WHEN c.${CONVERSATION.status} = 'closed' THEN 'open' ELSE c.${CONVERSATION.status} END,
      ${CONVERSATION.closedAt} = CASE WHEN c.${CONVERSATION.status} = 'closed' THEN NULL ELSE c.${CONVERSATION.closedAt} END, ${CONVERSATION.updatedAt} = now()
    FROM stored WHERE c.${CONVERSATION.tenantId} = $1 AND c.${CONVERSATION.id} = stored.${MESSAGE.conversationId}
    RETURNING c.*
  )
  SELECT (SELECT ${MESSAGE.id} FROM stored) AS "messageId", ${conversationRow.select("counted")} FROM counted
  UNION ALL
  SELECT NULL, ${conversationRow.select("found")} FROM found WHERE NOT EXISTS (SELECT 1 FROM stored)`,
};

async function ingestIntoExistingConversation(tenantId: string, input: InboundMessage, customerIdentifier: string): Promise<IngestResult | null> {
  const sql = scopeSqlToTenant(sqlIfOpen() ?? (await getSql()), tenantId);
  const at = new Date();
  const [row] = await sql<Record<string, unknown> & { messageId: string | null }>(INGEST_INTO_EXISTING, [
    input.channel,
    customerIdentifier,
    input.body,
    input.provider,
    input.providerMessageId,
    at.toISOString(),
  ]);
  if (!row) return null;
  const { messageId, ...c } = row;
  const conversation = conversationRow.parse(c);
  const message: MessageRow | null =
    messageId === null
      ? null
      : {
          id: messageId,
          tenantId,
          conversationId: conversation.id,
          direction: "inbound",
          author: "customer",
          body: input.body,
          status: "received",
          provider: input.provider,
          providerMessageId: input.providerMessageId,
          sendClaimedUntil: null,
          createdAt: at,
        };
  return { conversation, conversationCreated: false, message };
}

type NewMessage = Omit<MessageRow, "id" | "sendClaimedUntil">;

/**
 * Inserts messages that carry a provider id, skipping any already stored (ON CONFLICT DO NOTHING on
 * the (tenant, provider, provider message id) key, so concurrent deliveries of one message store it
 * once: the others wait for the first to commit, then insert nothing). Returns the rows inserted.
 */
export function insertMessagesOnce(tx: TenantTx, rows: NewMessage[]): Promise<MessageRow[]> {
  return tx.message.createManyAndReturn({ data: rows, skipDuplicates: true });
}

async function insertOnce(tx: TenantTx, row: NewMessage): Promise<MessageRow | null> {
  const [inserted] = await insertMessagesOnce(tx, [row]);
  return inserted ?? null;
}

/** A customer writing again reopens a closed conversation (a handoff stays a handoff). */
export async function reopenIfClosed(tx: TenantTx, conversation: { id: string; status: string }) {
  if (conversation.status !== "closed") return;
  await tx.conversation.updateMany({ where: { id: conversation.id, status: "closed" }, data: { status: "open", closedAt: null } });
}
