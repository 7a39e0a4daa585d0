// Demo data for the embedded first start: conversations on every channel with their messages
// (backdated over the last two weeks), a lead in every status, and appointments linked to them, so
// every conversation, message, lead and analytics endpoint answers something real out of the box.
// SMS, WhatsApp and voice conversations are their providers' traffic fed through the receivers
// (server/demo/demo-traffic.ts); webchat and email (no provider receivers) go through the same
// services as the API. Events are real; timestamps are then dated back.
import type { TenantDb } from "../db/tenant-scope";
import { createAppointment, updateAppointment } from "../appointments/appointments.service";
import { createLead, requestLeadHandoff, updateLead } from "../leads/leads.service";
import type { LeadStatus } from "../leads/leads.types";
import { createConversation, updateConversation } from "../conversations/conversations.service";
import type { Channel } from "../lib/conversation-channels";
import { dateConversationsByTheirTraffic, driveChat, retellCall, type DemoChannels } from "./demo-traffic";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

type Line = [author: "customer" | "assistant" | "operator", body: string];
type Script = {
  channel: Channel;
  identifier: string;
  name: string;
  summary: string;
  /** How long ago the conversation started and went quiet. */
  startedDaysAgo: number;
  quietDaysAgo: number;
  lines: Line[];
  lead?: { status: LeadStatus; offering: number; notes: string; attributes: Record<string, unknown> };
  appointment?: "upcoming" | "completed" | "cancelled";
  end?: "closed" | "handoff";
};

const SCRIPTS: Script[] = [
  {
    channel: "whatsapp",
    identifier: "+971501234560",
    name: "Layla Hassan",
    summary: "Looking for a 2-bedroom in the Marina; budget around 1.9M AED.",
    startedDaysAgo: 12,
    quietDaysAgo: 2,
    lines: [
      ["customer", "Hi, is the Marina two-bedroom still available?"],
      ["assistant", "Yes, it is. Would you like to book a viewing?"],
      ["customer", "Yes please, this weekend if possible."],
      ["assistant", "Saturday at 11:00 is free. Shall I book it?"],
      ["customer", "Perfect, book it."],
    ],
    lead: { status: "booked", offering: 0, notes: "Viewing booked for Saturday.", attributes: { budget_aed: 1900000, bedrooms: 2 } },
    appointment: "upcoming",
  },
  {
    channel: "sms",
    identifier: "+971501234561",
    name: "Omar Said",
    summary: "Bought the Downtown studio after a viewing.",
    startedDaysAgo: 14,
    quietDaysAgo: 6,
    lines: [
      ["customer", "Interested in the Downtown studio."],
      ["assistant", "Great choice. It is 950,000 AED. A viewing on Tuesday?"],
      ["customer", "Tuesday works."],
      ["operator", "Thanks for visiting, Omar. The paperwork is ready."],
      ["customer", "Signed. Thank you!"],
    ],
    lead: { status: "converted", offering: 1, notes: "Signed the sale agreement.", attributes: { budget_aed: 1000000, financing: "cash" } },
    appointment: "completed",
    end: "closed",
  },
  {
    channel: "webchat",
    identifier: "visitor-7f3a",
    name: "Sara Khan",
    summary: "Asked about haircut prices; wants to compare salons first.",
    startedDaysAgo: 11,
    quietDaysAgo: 9,
    lines: [
      ["customer", "How much is a haircut and styling?"],
      ["assistant", "It is 120 AED and takes about 45 minutes."],
      ["customer", "Thanks, I will think about it."],
    ],
    lead: { status: "qualified", offering: 2, notes: "Price-sensitive; follow up with an offer.", attributes: { service: "hair" } },
  },
  {
    channel: "email",
    identifier: "john.doe@example.com",
    name: "John Doe",
    summary: "Wants a massage on a weekday evening.",
    startedDaysAgo: 3,
    quietDaysAgo: 1,
    lines: [
      ["customer", "Do you have evening slots for a deep tissue massage?"],
      ["assistant", "We do, until 21:00 on weekdays. Which day suits you?"],
      ["customer", "Thursday, ideally."],
    ],
    lead: { status: "qualified", offering: 3, notes: "Thursday evening.", attributes: { service: "spa", preferred_time: "evening" } },
  },
  {
    channel: "whatsapp",
    identifier: "+971501234564",
    name: "Mina Park",
    summary: "Just started asking about apartments.",
    startedDaysAgo: 0,
    quietDaysAgo: 0,
    lines: [
      ["customer", "Hello! Do you have apartments near the metro?"],
      ["assistant", "Several. What budget and size are you looking for?"],
    ],
    lead: { status: "new", offering: 1, notes: "", attributes: {} },
  },
  {
    channel: "sms",
    identifier: "+971501234565",
    name: "Ali Reza",
    summary: "Cancelled the viewing; bought elsewhere.",
    startedDaysAgo: 10,
    quietDaysAgo: 7,
    lines: [
      ["customer", "I booked a viewing but need to cancel."],
      ["assistant", "No problem, I have cancelled it. Would you like another date?"],
      ["customer", "No thanks, I found something else."],
    ],
    lead: { status: "lost", offering: 0, notes: "Bought elsewhere.", attributes: { reason_lost: "competitor" } },
    appointment: "cancelled",
  },
  {
    channel: "webchat",
    identifier: "visitor-c21d",
    name: "Noor Ahmed",
    summary: "Asked for a human about a complaint.",
    startedDaysAgo: 1,
    quietDaysAgo: 0,
    lines: [
      ["customer", "I was charged twice for my last visit."],
      ["assistant", "I am sorry about that. Let me bring in a colleague."],
    ],
    lead: { status: "new", offering: 3, notes: "Billing issue.", attributes: {} },
    end: "handoff",
  },
  {
    channel: "voice",
    identifier: "+971501234567",
    name: "Khalid Mansour",
    summary: "Called to ask about opening hours.",
    startedDaysAgo: 5,
    quietDaysAgo: 5,
    lines: [
      ["customer", "What are your opening hours on Friday?"],
      ["assistant", "We are open from 10:00 to 22:00 on Fridays."],
    ],
  },
];

export async function seedConversations(db: TenantDb, offerings: { id: string }[], channels: DemoChannels): Promise<void> {
  const now = Date.now();
  for (const [n, script] of SCRIPTS.entries()) {
    // Messages spread evenly from the start to the moment the conversation went quiet.
    const start = now - script.startedDaysAgo * DAY - 2 * HOUR;
    const end = now - script.quietDaysAgo * DAY - HOUR;
    const step = script.lines.length > 1 ? (end - start) / (script.lines.length - 1) : 0;
    const times = script.lines.map((_, i) => new Date(Math.round(start + i * step)));
    const conversationId = await recordScript(db, channels, script, times, n);
    await updateConversation(db, { id: conversationId, customer_name: script.name, summary: script.summary });
    const conversation = { id: conversationId };

    if (script.lead) {
      const offering = offerings[script.lead.offering % offerings.length];
      let lead = await createLead(db, {
        conversation_id: conversation.id,
        offering_id: offering?.id,
        customer_name: script.name,
        customer_phone: script.identifier.startsWith("+") ? script.identifier : null,
        customer_email: script.channel === "email" ? script.identifier : null,
        notes: script.lead.notes || null,
        attributes: script.lead.attributes,
      });
      // Walk the status path a real lead takes (qualified first), so qualified_at and events are real.
      const path: LeadStatus[] = script.lead.status === "new" ? [] : script.lead.status === "qualified" ? ["qualified"] : ["qualified", script.lead.status];
      for (const status of path) lead = await updateLead(db, { id: lead.id, status });
      await db.lead.updateMany({
        where: { id: lead.id },
        data: {
          createdAt: new Date(start),
          ...(path.length ? { qualifiedAt: new Date(start + HOUR) } : {}),
          ...(script.lead.status === "converted" ? { convertedAt: new Date(start + 2 * HOUR) } : {}),
        },
      });

      if (script.appointment) {
        const at = script.appointment === "upcoming" ? now + 2 * DAY : now - (script.quietDaysAgo + 1) * DAY;
        const slot = new Date(Math.floor(at / HOUR) * HOUR);
        const appointment = await createAppointment(db, {
          customer_name: script.name,
          customer_phone: script.identifier.startsWith("+") ? script.identifier : "+971501234599",
          scheduled_start: slot.toISOString(),
          scheduled_end: new Date(slot.getTime() + HOUR).toISOString(),
          conversation_id: conversation.id,
          lead_id: lead.id,
          offering_id: offering?.id,
          location_text: "Showroom, Marina Walk",
        });
        if (script.appointment !== "upcoming") await updateAppointment(db, { id: appointment.id, status: script.appointment });
      }
      if (script.end === "handoff") await requestLeadHandoff(db, { id: lead.id, reason: "Billing complaint" });
    }
    if (script.end === "closed") await updateConversation(db, { id: conversation.id, status: "closed" });
  }
  await dateConversationsByTheirTraffic(db);
}

/**
 * A script's conversation and messages: through the receivers for the provider channels (WhatsApp
 * alternating between the Cloud API and Twilio), through the API's service for webchat and email.
 */
async function recordScript(db: TenantDb, channels: DemoChannels, script: Script, times: Date[], n: number): Promise<string> {
  if (script.channel === "voice") {
    await retellCall(
      channels,
      script.identifier,
      times[0],
      script.lines.map(([author, body]) => [author === "customer" ? "customer" : "assistant", body]),
      script.summary,
    );
    return (await db.conversation.findFirstOrThrow({ where: { channel: "voice", customerIdentifier: script.identifier }, select: { id: true } })).id;
  }
  if (script.channel === "sms" || script.channel === "whatsapp") {
    const via = script.channel === "whatsapp" && n % 2 === 0 ? "whatsapp_cloud" : "twilio";
    return driveChat(db, channels, { channel: script.channel, via, customer: script.identifier, name: script.name, lines: script.lines, times });
  }
  const { conversation } = await createConversation(db, { channel: script.channel, customer_identifier: script.identifier });
  await db.message.createMany({
    data: script.lines.map(([author, body], i) => ({
      tenantId: db.tenantId,
      conversationId: conversation.id,
      direction: author === "customer" ? "inbound" : "outbound",
      author,
      body,
      status: author === "customer" ? "received" : "sent",
      createdAt: times[i],
    })),
  });
  const last = times[times.length - 1];
  await db.conversation.updateMany({
    where: { id: conversation.id },
    data: { createdAt: new Date(times[0].getTime() - 60_000), lastMessageAt: last, lastActivityAt: last, messageCount: script.lines.length },
  });
  return conversation.id;
}
