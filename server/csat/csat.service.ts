// Customer satisfaction answers: stored with their `csat.received` event in one transaction.
import type { TenantDb } from "../db/tenant-scope";
import { notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { CSAT_EVENTS } from "./csat.events";
import { type CsatResponse, csatResource, type RecordCsatInput } from "./csat.types";

const emitEvent = eventEmitter(CSAT_EVENTS);

const csatToWire = csatResource.toWire;

/** Records one answer for a conversation of the tenant (404 otherwise) and emits `csat.received`. */
export async function recordCsat(db: TenantDb, input: RecordCsatInput): Promise<CsatResponse> {
  return db.$transaction(async (tx) => {
    const conversation = await tx.conversation.findFirst({ where: { id: input.conversation_id }, select: { id: true } });
    if (!conversation) throw notFound();
    const row = await tx.csatResponse.create({
      data: { tenantId: tx.tenantId, conversationId: conversation.id, score: input.score, comment: input.comment || null },
    });
    const csat = csatToWire(row);
    await emitEvent(tx, "csat.received", { object: csat });
    return csat;
  });
}
