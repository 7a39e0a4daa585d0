// Ingest: an inbound message from a provider becomes the customer's message in their conversation.
// One transaction: the conversation of (tenant, channel, normalized customer identifier) is found
// or created by the same rule as `POST /conversations` (a new pair emits `conversation.created`),
// the message is stored (inbound, customer, received) and counted, and a closed conversation is
// reopened. Idempotent on (tenant, provider, provider message id): a retried delivery inserts
// nothing (ON CONFLICT DO NOTHING), so it counts nothing and emits nothing a second time.
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { countNewMessages, findOrCreateConversation, type ConversationRow, type MessageRow } from "../conversations/conversations.service";
import { normalizeCustomerIdentifier, type Channel } from "../conversations/customer-identifier";
import type { ChannelProvider } from "./providers";

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

export async function ingestInboundMessage(db: TenantDb, tenantId: string, input: InboundMessage): Promise<IngestResult> {
  const customerIdentifier = normalizeCustomerIdentifier(input.channel, input.from);
  return db.$transaction(async (tx) => {
    const { row, created } = await findOrCreateConversation(tx, { channel: input.channel, customerIdentifier, customerName: input.customerName });
    const at = new Date();
    const message = await insertOnce(tx, {
      tenantId, conversationId: row.id, direction: "inbound", author: "customer", body: input.body, status: "received",
      provider: input.provider, providerMessageId: input.providerMessageId, createdAt: at,
    });
    if (!message) return { conversation: row, conversationCreated: created, message: null };
    await reopenIfClosed(tx, row);
    const conversation = await countNewMessages(tx, row.id, at);
    return { conversation, conversationCreated: created, message };
  }, INGEST_TRANSACTION);
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
