// The demo seed's conversations: every endpoint answers real data (leads in every status,
// appointments linked to them, a stale qualified lead, a handoff and a closed conversation).
import { describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { tenantDb } from "../helpers/conversations";
import { createOffering } from "../../server/offerings/offerings.service";
import { seedConversations } from "../../server/demo/seed-conversations";
import { connectDemoChannels } from "../../server/demo/demo-traffic";
import { uniqueBusinessNumber } from "../channels/fixtures";

describe("seedConversations", () => {
  it("fills a tenant with conversations, messages, leads in every status and linked appointments", async () => {
    const { tenantId, key } = await tenantWithKey();
    const db = await tenantDb(tenantId);
    const offerings = [];
    for (const title of ["Apartment", "Studio", "Haircut", "Massage"]) {
      offerings.push(await createOffering(db, { title, price: "100", price_currency: "AED" } as never));
    }
    // Its SMS, WhatsApp and voice conversations come through the receivers, on this tenant's own numbers.
    const channels = await connectDemoChannels(db, tenantId, {
      twilio: uniqueBusinessNumber(),
      voice: uniqueBusinessNumber(),
      whatsappCloud: `${Date.now()}${process.pid}`,
    });
    await seedConversations(db, offerings, channels);

    const conversations = (await call("GET", "/conversations?limit=100", { key })).body.data;
    expect(conversations).toHaveLength(8);
    expect(new Set(conversations.map((c: any) => c.channel))).toEqual(new Set(["voice", "sms", "whatsapp", "webchat", "email"]));
    expect(conversations.map((c: any) => c.status).sort()).toEqual(["closed", "handoff", "open", "open", "open", "open", "open", "open"]);
    for (const c of conversations) {
      const messages = (await call("GET", `/conversations/${c.id}/messages`, { key })).body.data;
      expect(messages).toHaveLength(c.message_count);
      expect(messages.at(-1).created_at).toBe(c.last_message_at);
      expect(messages.map((m: any) => m.created_at)).toEqual([...messages.map((m: any) => m.created_at)].sort());
    }

    const leads = (await call("GET", "/leads?limit=100", { key })).body.data;
    expect(new Set(leads.map((l: any) => l.status))).toEqual(new Set(["new", "qualified", "booked", "converted", "lost"]));
    const stale = (await call("GET", "/leads?stale_for_days=7", { key })).body.data;
    expect(stale.map((l: any) => l.customer_name)).toEqual(["Sara Khan"]);

    const appointments = (await call("GET", "/appointments?limit=100", { key })).body.data;
    expect(appointments.map((a: any) => a.status).sort()).toEqual(["cancelled", "completed", "confirmed"]);
    const leadIds = new Set(leads.map((l: any) => l.id));
    for (const a of appointments) {
      expect(leadIds.has(a.lead_id)).toBe(true);
      expect(conversations.some((c: any) => c.id === a.conversation_id)).toBe(true);
    }
  });
});
