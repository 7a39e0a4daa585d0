// Calls: a phone call's lifecycle as the voice providers report it. A call belongs to the
// conversation of (tenant, voice, the customer's number), found or created by POST /conversations'
// own rule. Each report is applied in one transaction, idempotently on the provider's call id:
//   - the first report of a call inserts it and emits `call.started` (whatever that report is);
//   - an answer moves it `ringing` -> `in_progress`;
//   - its end moves it to `completed` (it was answered: `call.completed`) or `missed` (no answer,
//     busy, failed, or the caller hung up before the assistant answered: `call.missed`), once; the
//     end report decides which (a provider knows at the end whether the assistant ever spoke);
//   - later reports (an analysis after the end) only fill in what was missing: summary, recording;
//   - transcript turns become the conversation's messages (customer / assistant), each stored once.
// Reports may arrive out of order or concurrently: the call row is locked while a report is applied.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { changedFields } from "../lib/wire";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { CALL_EVENTS } from "./calls.events";
import { countNewMessages, findOrCreateConversation, type ConversationRow } from "../conversations/conversations.service";
import { badRequest } from "../lib/errors";
import { MAX_SENDER_LENGTH, senderIdentifier } from "../lib/sender-identifier";
import { insertMessagesOnce, INGEST_TRANSACTION, reopenIfClosed } from "../conversations/ingest";
import type { ChannelProvider } from "../channels/providers";
import { assertConnectionCurrentIn, type ConnectionCheck } from "../channels/channel-connections";
import { callResource } from "./calls.types";

const emitEvent = eventEmitter(CALL_EVENTS);

type CallRow = Prisma.CallGetPayload<object>;

const callToWire = callResource.toWire;

export type TranscriptTurn = { role: "customer" | "assistant"; text: string; at: Date };

/** One provider report about a call, in the provider-neutral terms the receivers translate to. */
export type CallReport = {
  provider: ChannelProvider;
  providerCallId: string;
  direction: "inbound" | "outbound";
  /** The customer's number as the provider sent it (the caller of an inbound call, the callee of an
   * outbound one): E.164 when it is a number, else kept as sent (server/lib/sender-identifier.ts). */
  customerNumber: string;
  startedAt: Date;
  /** When the assistant answered, if it has. */
  answeredAt?: Date | null;
  /** Present when the call has ended. `answered` decides completed or missed. */
  ended?: { at: Date; answered: boolean; reason: string | null; durationSeconds?: number | null };
  recordingUrl?: string | null;
  summary?: string | null;
  transcript?: TranscriptTurn[];
};

export type CallReportResult = { call: CallRow; conversation: ConversationRow; events: string[] };

/**
 * Applies a report in one transaction. `connection`: the channel connection a receiver verified the
 * report with; the transaction stores nothing unless it is still current (`StaleConnectionError`,
 * see server/receivers/connection-gate.ts). Null for in-process callers that verified nothing.
 */
export async function applyCallReport(db: TenantDb, report: CallReport, connection: ConnectionCheck | null = null): Promise<CallReportResult> {
  // A provider-verified caller is never refused for its format (only a blank or oversized one is).
  const customer = senderIdentifier(report.customerNumber);
  if (!customer) throw badRequest(`invalid field 'customerNumber': must be 1 to ${MAX_SENDER_LENGTH} characters`, "customerNumber");
  return db.$transaction(async (tx) => {
    await assertConnectionCurrentIn(tx, connection);
    const pair = { channel: "voice" as const, customerIdentifier: customer.identifier, customerIdentifierKind: customer.kind };
    const { row: conversation } = await findOrCreateConversation(tx, pair);
    const events: string[] = [];
    const inserted = await insertCallOnce(tx, conversation.id, report);
    if (inserted) {
      await emitEvent(tx, "call.started", { object: callToWire(inserted) });
      events.push("call.started");
      await reopenIfClosed(tx, conversation);
    }
    if (!(await lockTenantRow(tx, "Call", inserted?.id ?? (await callIdOf(tx, report))))) throw new Error("call row vanished");
    let call = await tx.call.findFirstOrThrow({ where: { provider: report.provider, providerCallId: report.providerCallId } });
    call = await applyAnswer(tx, call, report);
    const ended = await applyEnd(tx, call, report);
    if (ended.event) events.push(ended.event);
    call = await applyLateDetails(tx, ended.call, report);
    const counted = await storeTranscript(tx, call, report.transcript ?? []);
    return { call, conversation: counted ?? conversation, events };
  }, INGEST_TRANSACTION);
}

async function callIdOf(tx: TenantTx, report: CallReport): Promise<string> {
  const row = await tx.call.findFirst({ where: { provider: report.provider, providerCallId: report.providerCallId }, select: { id: true } });
  if (!row) throw new Error("call insert skipped but no existing row was found");
  return row.id;
}

/** Inserts the call unless the provider's id is already stored (ON CONFLICT DO NOTHING): the inserted row, or null. */
async function insertCallOnce(tx: TenantTx, conversationId: string, report: CallReport): Promise<CallRow | null> {
  const answeredAt = report.answeredAt ?? null;
  const [row] = await tx.call.createManyAndReturn({
    data: [
      {
        tenantId: tx.tenantId,
        conversationId,
        provider: report.provider,
        providerCallId: report.providerCallId,
        direction: report.direction,
        status: answeredAt ? "in_progress" : "ringing",
        startedAt: report.startedAt,
        answeredAt,
      },
    ],
    skipDuplicates: true,
  });
  return row ?? null;
}

const isOver = (call: CallRow) => call.status === "completed" || call.status === "missed";

async function applyAnswer(tx: TenantTx, call: CallRow, report: CallReport): Promise<CallRow> {
  if (!report.answeredAt || call.status !== "ringing") return call;
  return tx.call.update({ where: { id: call.id }, data: { status: "in_progress", answeredAt: report.answeredAt } });
}

/** The end of a call, once: `completed` with `call.completed` when it was answered, else `missed` with `call.missed`. */
async function applyEnd(tx: TenantTx, call: CallRow, report: CallReport): Promise<{ call: CallRow; event?: "call.completed" | "call.missed" }> {
  const end = report.ended;
  if (!end || isOver(call)) return { call };
  // The end report decides: a call connected to the assistant that hung up before it spoke is missed.
  const answered = end.answered;
  const answeredAt = answered ? (report.answeredAt ?? call.answeredAt ?? call.startedAt) : null;
  const talked = answeredAt ? Math.max(0, Math.round((end.at.getTime() - answeredAt.getTime()) / 1000)) : 0;
  const data = {
    status: answered ? "completed" : "missed",
    answeredAt: answered ? answeredAt : null,
    endedAt: end.at,
    endReason: end.reason,
    durationSeconds: answered ? (end.durationSeconds ?? talked) : 0,
    // What the end report carries belongs in the event that announces the end.
    ...(report.recordingUrl ? { recordingUrl: report.recordingUrl } : {}),
    ...(report.summary ? { summary: report.summary } : {}),
  };
  const before = callToWire(call);
  const updated = await tx.call.update({ where: { id: call.id }, data });
  const object = callToWire(updated);
  if (answered) {
    await emitEvent(tx, "call.completed", { object, previous_attributes: changedFields(before, object) });
    return { call: updated, event: "call.completed" };
  }
  await emitEvent(tx, "call.missed", { object });
  return { call: updated, event: "call.missed" };
}

/** A summary or recording reported after the end (an analysis) fills in what the call lacks; no event. */
async function applyLateDetails(tx: TenantTx, call: CallRow, report: CallReport): Promise<CallRow> {
  const data: { summary?: string; recordingUrl?: string } = {};
  if (report.summary && report.summary !== call.summary) data.summary = report.summary;
  if (report.recordingUrl && report.recordingUrl !== call.recordingUrl) data.recordingUrl = report.recordingUrl;
  if (Object.keys(data).length === 0) return call;
  return tx.call.update({ where: { id: call.id }, data });
}

/**
 * Transcript turns become the conversation's messages: the customer's inbound (`received`), the
 * assistant's outbound (`sent`). Each turn's provider id is `<call id>#<turn index>`, so a report
 * sent again (or a later report carrying the whole transcript) stores each turn once.
 */
async function storeTranscript(tx: TenantTx, call: CallRow, turns: TranscriptTurn[]): Promise<ConversationRow | null> {
  if (turns.length === 0) return null;
  const inserted = await insertMessagesOnce(
    tx,
    turns.map((turn, i) => ({
      tenantId: tx.tenantId,
      conversationId: call.conversationId,
      direction: turn.role === "customer" ? "inbound" : "outbound",
      author: turn.role,
      body: turn.text,
      status: turn.role === "customer" ? "received" : "sent",
      provider: call.provider,
      providerMessageId: `${call.providerCallId}#${i}`,
      createdAt: turn.at,
    })),
  );
  if (inserted.length === 0) return null;
  const latest = new Date(Math.max(...inserted.map((m) => m.createdAt.getTime())));
  return countNewMessages(tx, call.conversationId, latest, inserted.length);
}

/** A conversation's calls, newest first (started_at, then id, descending). */
export async function listCalls(db: TenantDb, input: { id: string; limit?: number; cursor?: string }) {
  const conversation = await db.conversation.findFirst({ where: { id: input.id }, select: { id: true } });
  if (!conversation) throw notFound();
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "startedAt",
    direction: "desc",
    loadCursor: (id) => db.call.findFirst({ where: { id, conversationId: conversation.id }, select: { startedAt: true } }),
    findMany: (args) => db.call.findMany({ ...args, where: { ...args.where, conversationId: conversation.id } }),
  });
  return toListEnvelope(page, callToWire);
}
