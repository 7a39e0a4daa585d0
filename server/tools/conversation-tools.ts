// The two tools that compose domain services rather than call one: the conversation's context for
// the assistant's next turn, and "the conversation's lead, created or updated".
import { z } from "zod";
import type { TenantDb } from "../db/tenant-scope";
import { conversationSchema, messageSchema } from "../conversations/conversations.types";
import { getConversation, latestMessages } from "../conversations/conversations.service";
import { createLeadInput, leadSchema, updateLeadInput, type Lead } from "../leads/leads.types";
import { createLead, leadToWire, updateLead } from "../leads/leads.service";
import { appointmentSchema } from "../appointments/appointments.types";
import { appointmentToWire } from "../appointments/appointments.service";
import { notFound } from "../lib/errors";
import { joinTransaction } from "../db/join-transaction";

const CONTEXT_MESSAGES = 20;
const CONTEXT_APPOINTMENTS = 10;

export const conversationContextSchema = z.object({
  conversation: conversationSchema,
  messages: z.array(messageSchema).max(CONTEXT_MESSAGES).describe(`The conversation's last ${CONTEXT_MESSAGES} messages, oldest first`),
  lead: leadSchema.nullable().describe("The conversation's lead (the newest, if it has several); null before upsert_lead"),
  upcoming_appointments: z
    .array(appointmentSchema)
    .max(CONTEXT_APPOINTMENTS)
    .describe(`Confirmed appointments of this conversation or its leads that have not ended, soonest first (at most ${CONTEXT_APPOINTMENTS})`),
});
export type ConversationContext = z.infer<typeof conversationContextSchema>;

const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/** The conversation (404 if not the tenant's), its last 20 messages, its lead and its upcoming appointments. */
export async function getConversationContext(db: TenantDb, conversationId: string): Promise<ConversationContext> {
  const conversation = await getConversation(db, conversationId);
  const [messages, lead, appointments] = await Promise.all([
    latestMessages(db, conversation.id, CONTEXT_MESSAGES),
    db.lead.findFirst({ where: { conversationId: conversation.id }, orderBy: newestFirst }),
    db.appointment.findMany({
      where: {
        status: "confirmed",
        scheduledEnd: { gt: new Date() },
        OR: [{ conversationId: conversation.id }, { lead: { is: { conversationId: conversation.id } } }],
      },
      orderBy: [{ scheduledStart: "asc" }, { id: "asc" }],
      take: CONTEXT_APPOINTMENTS,
    }),
  ]);
  return { conversation, messages, lead: lead && leadToWire(lead), upcoming_appointments: appointments.map(appointmentToWire) };
}

export const upsertLeadInput = createLeadInput.extend({
  status: updateLeadInput.shape.status.optional(),
});
export type UpsertLeadInput = z.infer<typeof upsertLeadInput>;

/**
 * The conversation's lead with these fields: created (`lead.created`) when the conversation has
 * none, else its newest lead updated (`lead.updated`); a status leaving `new` also qualifies it
 * (`lead.qualified`), by createLead's and updateLead's own rules. Calls for one conversation take
 * turns (a transaction-scoped advisory lock, which no row lock waits on), so two racing calls
 * cannot both create a lead.
 */
export async function upsertConversationLead(db: TenantDb, input: UpsertLeadInput): Promise<Lead> {
  const { tenantId } = db;
  const { conversation_id: conversationId, status, ...fields } = input;
  return db.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended($1, 0))`, `upsert_lead:${conversationId}`);
    const conversation = await tx.conversation.findFirst({ where: { id: conversationId }, select: { id: true } });
    if (!conversation) throw notFound();
    const joined = joinTransaction(tx);
    const existing = await tx.lead.findFirst({ where: { conversationId }, orderBy: newestFirst, select: { id: true } });
    if (existing) return updateLead(joined, { id: existing.id, ...fields, status });
    const lead = await createLead(joined, { conversation_id: conversationId, ...fields });
    return status && status !== "new" ? updateLead(joined, { id: lead.id, status }) : lead;
  });
}
