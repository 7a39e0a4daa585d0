// A typed client for the Tenant Data API in a dozen lines: types generated from the served OpenAPI
// document by openapi-typescript (`npm run client:types`), requests made with openapi-fetch.
//   API_BASE_URL=http://127.0.0.1:3000 API_KEY=xapk_live_… npx tsx examples/typed-client/list-offerings-and-book.ts
import createClient from "openapi-fetch";
import type { paths } from "./generated/api";

const client = createClient<paths>({
  baseUrl: `${process.env.API_BASE_URL ?? "http://127.0.0.1:3000"}/api/v1`,
  headers: { Authorization: `Bearer ${process.env.API_KEY}` },
});

// Create an offering, list the catalog, book a viewing, and find the booking's event.
const created = await client.POST("/offerings", {
  body: { title: "Two-bedroom apartment, Marina", price: "1500000.00", price_currency: "AED", attributes: { bedrooms: 2 } },
});
if (!created.data) throw new Error(`create failed: ${created.response.status} ${created.error?.error.message}`);

const page = await client.GET("/offerings", { params: { query: { limit: 5 } } });
if (!page.data) throw new Error(`list failed: ${page.error?.error.message}`);

// A retry of this request with the same Idempotency-Key (after a timeout or a 503) books once.
const booked = await client.POST("/appointments", {
  params: { header: { "Idempotency-Key": crypto.randomUUID() } },
  body: {
    customer_name: "Layla Haddad",
    customer_phone: "+971501234567",
    offering_id: created.data.id,
    scheduled_start: "2026-12-01T09:00:00.000Z",
    scheduled_end: "2026-12-01T09:30:00.000Z",
  },
});
if (!booked.data) throw new Error(`booking failed: ${booked.error?.error.message}`);

const events = await client.GET("/events", { params: { query: { type: "booking.created", limit: 1 } } });
if (!events.data) throw new Error(`events failed: ${events.error?.error.message}`);

// A typo in a field is a compile error here, and a 400 naming the field at run time.
console.log(
  JSON.stringify({
    offering: created.data.id,
    listed: page.data.data.map((o) => o.title),
    appointment: { id: booked.data.id, status: booked.data.status },
    event: events.data.data[0]?.event ?? null,
  }),
);
