// The embedded first start: a demo tenant with sample offerings and appointments, channels connected
// to its (fictional) provider accounts, a receptionist's week of calls and chats fed through the
// receivers, and an API key printed once, so a fresh clone answers real data right away.
import { database } from "../db/database";
import { scopeToTenant } from "../db/tenant-scope";
import { SCOPES } from "../auth/principal";
import { issueApiKey } from "../auth/api-keys";
import { OPERATOR } from "../audit/record-audit";
import { createTenant } from "../tenants/tenants";
import { createOffering } from "../offerings/offerings.service";
import { createOfferingInput } from "../offerings/offerings.types";
import { createAppointment } from "../appointments/appointments.service";
import { seedConversations } from "./seed-conversations";
import { connectDemoChannels, dateConversationsByTheirTraffic } from "./demo-traffic";
import { driveReceptionistWeek } from "./demo-week";

const DEMO_TENANT_SLUG = "demo";

const OFFERINGS = [
  { title: "Two-bedroom apartment, Marina", price: 1850000, price_currency: "AED", attributes: { bedrooms: 2, area_sqm: 120 }, address: "Dubai Marina" },
  { title: "Studio, Downtown", price: "950000.00", price_currency: "AED", attributes: { bedrooms: 0, area_sqm: 45 }, title_ar: "استوديو، وسط المدينة" },
  { title: "Haircut and styling", price: 120, price_currency: "AED", attributes: { service_type: "hair", duration_minutes: 45 } },
  { title: "Deep tissue massage", price: 350.5, price_currency: "AED", attributes: { service_type: "spa", duration_minutes: 60 }, status: "seasonal" },
];

/** Seeds the demo tenant once; returns the plaintext key only when it was just created. */
export async function seedDemoTenant(): Promise<{ tenantId: string; apiKey: string | null; owner?: { email: string; password: string } }> {
  const db = database().prisma;
  const existing = await db.tenant.findUnique({ where: { slug: DEMO_TENANT_SLUG } });
  if (existing) return { tenantId: existing.id, apiKey: null };
  const tenant = await createTenant({ name: "Demo Realty & Spa", slug: DEMO_TENANT_SLUG });
  const scoped = scopeToTenant(db, tenant.id);
  const offerings = [];
  for (const o of OFFERINGS) offerings.push(await createOffering(scoped, createOfferingInput.parse(o)));
  const day = 24 * 3600 * 1000;
  const now = Date.now();
  for (let i = 0; i < 6; i++) {
    const start = new Date(Math.floor((now + (i - 2) * day) / 3600_000) * 3600_000);
    await createAppointment(scoped, {
      customer_name: ["Layla Hassan", "Omar Said", "Sara Khan", "John Doe", "Mina Park", "Ali Reza"][i],
      customer_phone: `+97150123456${i}`,
      customer_email: i % 2 ? `customer${i}@example.com` : undefined,
      scheduled_start: start.toISOString(),
      scheduled_end: new Date(start.getTime() + 3600_000).toISOString(),
      offering_id: offerings[i % offerings.length].id,
      location_text: i % 2 ? "Showroom, Marina Walk" : null,
    });
  }
  const channels = await connectDemoChannels(scoped);
  await seedConversations(scoped, offerings, channels);
  await driveReceptionistWeek(scoped, channels);
  await dateConversationsByTheirTraffic(scoped);
  const { plaintext } = await issueApiKey(scoped, { name: "Demo key", scopes: [...SCOPES] }, OPERATOR);
  // Loaded here, not at import: a restart (the tenant exists) never loads better-auth's password hashing.
  const { createDemoOwner } = await import("../dashboard/users");
  const owner = await createDemoOwner(tenant.id);
  return { tenantId: tenant.id, apiKey: plaintext, owner };
}
