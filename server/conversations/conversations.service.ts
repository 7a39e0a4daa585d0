// Conversation and message actions. Every read and write goes through the tenant-scoped client.
import { Prisma } from "../db/generated/client";
import { rowSelect } from "../db/row-select";
import { modelColumns, TABLE } from "../db/columns";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { changedFields, mergeAttributes } from "../lib/wire";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { badRequest, conflict, notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { CONVERSATION_EVENTS } from "./conversations.events";
import { log } from "../lib/log";
import { driverForConversation, getChannelDriver, type ChannelDriver, type ChannelSendResult } from "../channels/channel-driver";
import type { Channel, CustomerIdentifierKind } from "../lib/conversation-channels";
import { normalizeCustomerIdentifier } from "../lib/customer-identifier";
import { canReceiveMessages } from "../lib/sender-identifier";
import {
  type Conversation,
  type CreateConversationInput,
  conversationResource,
  type Message,
  messageResource,
  type SendMessageInput,
  type UpdateConversationInput,
} from "./conversations.types";

const emitEvent = eventEmitter(CONVERSATION_EVENTS);

export type ConversationRow = Prisma.ConversationGetPayload<object>;

/** The conversation's whole row from raw SQL (the columns of Prisma's model; timestamps as ISO text). */
export const conversationRow = rowSelect<ConversationRow>(Prisma.ConversationScalarFieldEnum, {
  lastMessageAt: true,
  lastActivityAt: true,
  closedAt: true,
  handoffStartedAt: true,
  slaBreachedAt: true,
  createdAt: true,
  updatedAt: true,
});

export type MessageRow = Prisma.MessageGetPayload<object>;

export const conversationToWire = conversationResource.toWire;
export const messageToWire = messageResource.toWire;

export async function listConversations(db: TenantDb, input: { limit?: number; cursor?: string }) {
  const page = await keysetPage({
    ...input,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.conversation.findFirst({ where: { id }, select: { createdAt: true } }),
    findMany: (args) => db.conversation.findMany(args),
  });
  return toListEnvelope(page, conversationToWire);
}

export async function getConversation(db: TenantDb, id: string): Promise<Conversation> {
  const row = await db.conversation.findFirst({ where: { id } });
  if (!row) throw notFound();
  return conversationToWire(row);
}

/**
 * Pre-creates the conversation of a (channel, customer identifier) pair, or returns the existing
 * one untouched (`created: false`, no event) — that is what makes a retried POST safe.
 */
export async function createConversation(db: TenantDb, input: CreateConversationInput): Promise<{ conversation: Conversation; created: boolean }> {
  const customerIdentifier = normalizeCustomerIdentifier(input.channel, input.customer_identifier);
  return db.$transaction(async (tx) => {
    const { row, created } = await findOrCreateConversation(tx, {
      channel: input.channel,
      customerIdentifier,
      customerName: input.customer_name,
      summary: input.summary,
      attributes: input.attributes,
    });
    return { conversation: conversationToWire(row), created };
  });
}

/**
 * THE find-or-create rule of a (channel, normalized customer identifier) pair, inside the caller's
 * transaction (`POST /conversations` and inbound ingest both use it): a new pair is inserted and
 * emits `conversation.created`; an existing one is returned untouched, with no event. The insert is
 * `INSERT … ON CONFLICT DO NOTHING` against the (tenant, channel, identifier) unique constraint: of
 * two racing transactions, the second waits for the first to commit, inserts nothing, and then
 * reads the committed row, so no race can create a duplicate or answer a 500.
 */
export async function findOrCreateConversation(
  tx: TenantTx,
  pair: {
    channel: Channel;
    customerIdentifier: string;
    /** `as_sent` for a provider-verified sender that is no phone number (calls); API writes are normalized. */
    customerIdentifierKind?: CustomerIdentifierKind;
    customerName?: string | null;
    summary?: string | null;
    attributes?: Record<string, unknown>;
  },
): Promise<{ row: ConversationRow; created: boolean }> {
  // Twice at most: the pair's row found by the insert's conflict may be erased (its identifier
  // replaced, server/erasure/) while this waits for its lock; the pair is then free to insert.
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await tx.conversation.createManyAndReturn({
      data: [
        {
          tenantId: tx.tenantId,
          channel: pair.channel,
          customerIdentifier: pair.customerIdentifier,
          customerIdentifierKind: pair.customerIdentifierKind ?? "normalized",
          customerName: pair.customerName ?? null,
          summary: pair.summary ?? null,
          attributes: mergeAttributes({}, pair.attributes ?? {}),
        },
      ],
      skipDuplicates: true,
    });
    if (inserted.length === 1) {
      const row = inserted[0] as ConversationRow;
      await emitEvent(tx, "conversation.created", { object: conversationToWire(row) });
      return { row, created: true };
    }
    // Locked by the pair (not by id after a read): what the caller then stores goes into a
    // conversation that still belongs to this customer, never one erased in between.
    const [locked] = await tx.$queryRawUnsafe<{ id: string }[]>(LOCK_PAIR_SQL, tx.tenantId, pair.channel, pair.customerIdentifier);
    if (locked) return { row: (await tx.conversation.findFirstOrThrow({ where: { id: locked.id } })) as ConversationRow, created: false };
  }
  throw new Error("conversation insert skipped but no existing row was found");
}

const PAIR = modelColumns(Prisma.ConversationScalarFieldEnum);
const LOCK_PAIR_SQL = `SELECT ${PAIR.id} AS id FROM ${TABLE.Conversation} WHERE ${PAIR.tenantId} = $1::uuid AND ${PAIR.channel} = $2 AND ${PAIR.customerIdentifier} = $3 FOR UPDATE`;

export async function updateConversation(db: TenantDb, input: UpdateConversationInput): Promise<Conversation> {
  const { id, status, attributes, ...rest } = input;
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Conversation", id))) throw notFound();
    const beforeRow = await tx.conversation.findFirst({ where: { id } });
    if (!beforeRow) throw notFound();
    const data: Prisma.ConversationUncheckedUpdateInput = conversationResource.patchToColumns(rest);
    if (attributes !== undefined) data.attributes = mergeAttributes(beforeRow.attributes, attributes);
    if (status !== undefined && status !== beforeRow.status) {
      data.status = status;
      // `closed_at` is when the conversation was closed, so it exists only while it is closed:
      // reopening clears it, and closing again records the new time.
      data.closedAt = status === "closed" ? new Date() : null;
    }
    const before = conversationToWire(beforeRow);
    const candidate = conversationToWire({ ...beforeRow, ...data } as ConversationRow);
    if (Object.keys(changedFields(before, candidate)).length === 0) return before;

    const conversation = conversationToWire(await tx.conversation.update({ where: { id }, data }));
    if (data.status === "closed") {
      await emitEvent(tx, "conversation.closed", { object: conversation, previous_attributes: changedFields(before, conversation) });
    }
    return conversation;
  });
}

/**
 * Sends an operator message: stored `queued` (and counted on the conversation) in one transaction,
 * handed to the channel driver outside any transaction, then marked `sent` or `failed` together with
 * its `outbound.sent` / `outbound.failed` event. A provider failure is the message's state, not an
 * API error: the answer is still 201 with the `failed` message. The stored message carries a claim
 * that outlasts the driver's timeout: if this process dies mid-send, the message is still `queued`
 * when the claim runs out, and the recovery sweep (`send-recovery.ts`) sends it again.
 */
export async function sendMessage(db: TenantDb, input: SendMessageInput): Promise<Message> {
  // Resolved first: a misconfigured environment driver must fail before a message is stored.
  getChannelDriver();
  const { conversation, queued, driver } = await db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Conversation", input.id))) throw notFound();
    const row = await tx.conversation.findFirst({ where: { id: input.id } });
    if (!row) throw notFound();
    if (row.channel === "voice") {
      throw badRequest("invalid field 'channel': a 'voice' conversation cannot be sent text messages", "channel");
    }
    if (row.status === "closed") throw conflict("conversation is closed; reopen it (PATCH status 'open') before sending");
    // A short code is left to the provider; an alphanumeric sender id is one-way by definition.
    if (row.customerIdentifierKind === "as_sent" && !canReceiveMessages(row.customerIdentifier)) {
      throw conflict(
        "the conversation's customer is an alphanumeric sender id (customer_identifier_kind 'as_sent'), which cannot receive messages; reach the customer on another channel",
      );
    }
    // The channel's connected provider (Twilio, WhatsApp Cloud), else the environment's driver.
    const driver = await driverForConversation(tx, row);
    const now = new Date();
    const message = await tx.message.create({
      data: {
        tenantId: tx.tenantId,
        conversationId: row.id,
        direction: "outbound",
        author: "operator",
        body: input.body,
        status: "queued",
        createdAt: now,
        sendClaimedUntil: new Date(now.getTime() + sendClaimMs(driver)),
      },
    });
    const updated = await countNewMessages(tx, row.id, now);
    return { conversation: updated, queued: message, driver };
  });
  return deliverQueuedMessage(db, driver, conversation, queued);
}

/**
 * New messages count on their conversation (every path that stores messages calls this): its
 * `last_message_at` and activity clock move to the latest one, `message_count` grows by `count`.
 */
export function countNewMessages(tx: TenantTx, conversationId: string, latestAt: Date, count = 1) {
  return tx.conversation.update({
    where: { id: conversationId },
    data: { lastMessageAt: latestAt, lastActivityAt: latestAt, messageCount: { increment: count } },
  });
}

/** How long a sender holds a message: the driver's timeout plus a minute for the final write. */
export const sendClaimMs = (driver: Pick<ChannelDriver, "timeoutMs">) => Math.max(120_000, driver.timeoutMs + 60_000);

/**
 * Hands a `queued` message (claimed by the caller) to the driver and records the outcome: `sent` or
 * `failed`, the claim cleared, and `outbound.sent` / `outbound.failed`, in one transaction.
 */
export async function deliverQueuedMessage(db: TenantDb, driver: ChannelDriver, conversation: ConversationRow, queued: MessageRow): Promise<Message> {
  let result: ChannelSendResult;
  try {
    result = await driver.send({
      tenantId: db.tenantId,
      conversation: { id: conversation.id, channel: conversation.channel, customerIdentifier: conversation.customerIdentifier },
      message: { id: queued.id, body: queued.body },
    });
  } catch (err) {
    result = { ok: false, error: `channel driver '${driver.name}' failed` };
    log.error({ driver: driver.name, message_id: queued.id, error: err }, "channel driver threw");
  }
  if (!result.ok) log.warn({ driver: driver.name, message_id: queued.id, error: result.error }, "outbound message failed");
  return recordSendOutcome(db, driver, conversation, queued.id, result);
}

/**
 * Ends a send: the message's final status with its event, and the sender's claim cleared. A send
 * through a provider stores the provider's message id, which its delivery reports name.
 */
export function recordSendOutcome(
  db: TenantDb,
  driver: Pick<ChannelDriver, "name" | "provider">,
  conversation: ConversationRow,
  messageId: string,
  result: ChannelSendResult,
): Promise<Message> {
  const providerId = result.ok && driver.provider && result.providerMessageId ? { provider: driver.provider, providerMessageId: result.providerMessageId } : {};
  return db.$transaction(async (tx) => {
    const row = await tx.message.update({ where: { id: messageId }, data: { status: result.ok ? "sent" : "failed", sendClaimedUntil: null, ...providerId } });
    const message = messageToWire(row);
    const context = { conversation: conversationToWire(conversation), driver: driver.name };
    if (result.ok) {
      await emitEvent(tx, "outbound.sent", { object: message, ...context, provider_message_id: result.providerMessageId ?? null });
    } else {
      await emitEvent(tx, "outbound.failed", { object: message, ...context, error: result.error });
    }
    return message;
  });
}

export async function listMessages(db: TenantDb, input: { id: string; limit?: number; cursor?: string }) {
  const conversation = await db.conversation.findFirst({ where: { id: input.id }, select: { id: true } });
  if (!conversation) throw notFound();
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "createdAt",
    direction: "asc",
    loadCursor: (id) => db.message.findFirst({ where: { id, conversationId: conversation.id }, select: { createdAt: true } }),
    findMany: (args) => db.message.findMany({ ...args, where: { ...args.where, conversationId: conversation.id } }),
  });
  return toListEnvelope(page, messageToWire);
}

/** The conversation's latest `count` messages, oldest first (the `messages` of `lead.qualified`). */
export async function latestMessages(tx: TenantTx, conversationId: string, count = 10): Promise<Message[]> {
  const rows = await tx.message.findMany({
    where: { conversationId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: count,
  });
  return rows.reverse().map(messageToWire);
}
