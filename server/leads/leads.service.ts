// Lead actions. Every read and write goes through the tenant-scoped client.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantTx } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { changedFields, mergeAttributes } from "../lib/wire";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { conflict, notFound } from "../lib/errors";
import { normalizePhoneField } from "../lib/customer-identifier";
import { eventEmitter } from "../outbox/emit-event";
import { LEAD_EVENTS } from "./leads.events";
import { conversationToWire, latestMessages } from "../conversations/conversations.service";
import type { Conversation } from "../conversations/conversations.types";
import { type CreateLeadInput, type HandoffLeadInput, type Lead, leadResource, type UpdateLeadInput } from "./leads.types";

const emitEvent = eventEmitter(LEAD_EVENTS);

type LeadRow = Prisma.LeadGetPayload<object>;
const DAY_MS = 24 * 3600 * 1000;

export const leadToWire = leadResource.toWire;

/** A referenced row must be visible to the tenant; otherwise 404, exactly like a missing one. */
async function assertReferencesVisible(tx: TenantTx, refs: { conversation_id?: string; offering_id?: string | null }) {
  const checks: Promise<unknown>[] = [];
  if (refs.conversation_id) checks.push(tx.conversation.findFirst({ where: { id: refs.conversation_id }, select: { id: true } }));
  if (refs.offering_id) checks.push(tx.offering.findFirst({ where: { id: refs.offering_id, deletedAt: null }, select: { id: true } }));
  for (const found of await Promise.all(checks)) if (!found) throw notFound();
}

/**
 * `stale_for_days=N`: qualified leads whose conversation's `last_activity_at` (its last message, or
 * its creation) is more than N days old. One SQL query: the conversation condition is a semi-join
 * the planner answers from the (tenant_id, last_activity_at) and (tenant_id, status,
 * conversation_id) indexes, never a scan of the tenant's leads in JavaScript.
 */
export async function listLeads(db: TenantDb, input: { limit?: number; cursor?: string; stale_for_days?: number }) {
  const filter: Prisma.LeadWhereInput = {};
  if (input.stale_for_days !== undefined) {
    const cutoff = new Date(Date.now() - input.stale_for_days * DAY_MS);
    filter.status = "qualified";
    filter.conversation = { is: { tenantId: db.tenantId, lastActivityAt: { lt: cutoff } } };
  }
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.lead.findFirst({ where: { id }, select: { createdAt: true } }),
    findMany: (args) => db.lead.findMany({ ...args, where: { ...args.where, ...filter } }),
  });
  return toListEnvelope(page, leadToWire);
}

export async function getLead(db: TenantDb, id: string): Promise<Lead> {
  const row = await db.lead.findFirst({ where: { id } });
  if (!row) throw notFound();
  return leadToWire(row);
}

/**
 * The body with its `customer_phone` in the stored form: E.164 (a 400 naming the field when it is
 * not a valid number), a blank one as no phone (null). One customer's leads are then found by one
 * value, whoever wrote them how (an erasure, docs/data-rights.md).
 */
function withStoredPhone<T extends { customer_phone?: string | null }>(input: T): T {
  const phone = input.customer_phone;
  if (phone === undefined || phone === null) return input;
  return { ...input, customer_phone: phone.trim() === "" ? null : normalizePhoneField("customer_phone", phone) };
}

export async function createLead(db: TenantDb, raw: CreateLeadInput): Promise<Lead> {
  const input = withStoredPhone(raw);
  return db.$transaction(async (tx) => {
    await assertReferencesVisible(tx, input);
    const row = await tx.lead.create({
      data: { ...leadResource.patchToColumns(input), tenantId: tx.tenantId, status: "new", attributes: mergeAttributes({}, input.attributes ?? {}) },
    });
    const lead = leadToWire(row);
    await emitEvent(tx, "lead.created", { object: lead });
    return lead;
  });
}

export async function updateLead(db: TenantDb, input: UpdateLeadInput): Promise<Lead> {
  const { id, attributes, ...rest } = withStoredPhone(input);
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Lead", id))) throw notFound();
    const beforeRow = await tx.lead.findFirst({ where: { id } });
    if (!beforeRow) throw notFound();
    const data: Prisma.LeadUncheckedUpdateInput = leadResource.patchToColumns(rest);
    if (attributes !== undefined) data.attributes = mergeAttributes(beforeRow.attributes, attributes);
    const before = leadToWire(beforeRow);
    const candidate = leadToWire({ ...beforeRow, ...data } as LeadRow);
    if (Object.keys(changedFields(before, candidate)).length === 0) return before;

    if (candidate.status === "new" && before.status !== "new") {
      throw conflict(`lead is ${before.status}; a lead cannot move back to 'new'`);
    }
    if (candidate.offering_id !== before.offering_id) await assertReferencesVisible(tx, { offering_id: candidate.offering_id });
    // The status never returns to `new`, so a lead leaves it (and is qualified) at most once.
    const qualifies = before.status === "new" && candidate.status !== "new" && beforeRow.qualifiedAt === null;
    if (qualifies) data.qualifiedAt = new Date();
    // Analytics count a conversion on the day it happened, whatever changes the lead later.
    if (candidate.status === "converted" && before.status !== "converted") data.convertedAt = new Date();

    const lead = leadToWire(await tx.lead.update({ where: { id }, data }));
    const previous = changedFields(before, lead);
    await emitEvent(tx, "lead.updated", { object: lead, previous_attributes: previous });
    if (qualifies) {
      await emitEvent(tx, "lead.qualified", {
        object: lead,
        previous_attributes: { status: before.status, qualified_at: null },
        messages: await latestMessages(tx, lead.conversation_id, 10),
      });
    }
    return lead;
  });
}

/**
 * Hands the lead's conversation to a human: the lead records when, the conversation becomes
 * `handoff`, and `conversation.handoff_requested` carries the conversation, the lead and the reason.
 * Repeating it while the conversation is still in handoff for this lead changes nothing and emits
 * nothing (a retried POST is safe). A closed conversation is a 409: reopen it first.
 */
export async function requestLeadHandoff(db: TenantDb, input: HandoffLeadInput): Promise<Lead> {
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Lead", input.id))) throw notFound();
    const leadRow = await tx.lead.findFirst({ where: { id: input.id } });
    if (!leadRow) throw notFound();
    await lockTenantRow(tx, "Conversation", leadRow.conversationId);
    const conversationRow = await tx.conversation.findFirst({ where: { id: leadRow.conversationId } });
    if (!conversationRow) throw notFound();
    if (conversationRow.status === "closed") {
      throw conflict("the lead's conversation is closed; reopen it (PATCH status 'open') before requesting a handoff");
    }
    if (conversationRow.status === "handoff" && leadRow.handoffRequestedAt) return leadToWire(leadRow);

    const now = new Date();
    const lead = leadToWire(await tx.lead.update({ where: { id: leadRow.id }, data: { handoffRequestedAt: now } }));
    let conversation: Conversation = conversationToWire(conversationRow);
    const previous: Record<string, unknown> = {};
    if (conversationRow.status !== "handoff") {
      // A new handoff: the SLA clock starts now, and this handoff may breach once (sla-monitor.ts).
      const data = { status: "handoff", handoffStartedAt: now, slaBreachedAt: null };
      conversation = conversationToWire(await tx.conversation.update({ where: { id: conversationRow.id }, data }));
      previous.status = conversationRow.status;
    }
    await emitEvent(tx, "conversation.handoff_requested", {
      object: conversation,
      previous_attributes: previous,
      lead,
      reason: input.reason ?? null,
    });
    return lead;
  });
}
