// Examples for the OpenAPI document (see server/lib/examples.ts).
import { EXAMPLE_LATER, EXAMPLE_TIME, type OperationExamples } from "../lib/examples";
import type { Offering } from "./offerings.types";

export const offeringExample: Offering = {
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  external_id: "crm-4411",
  reference_number: "APT-2BR-0917",
  title: "Two-bedroom apartment, Marina",
  title_ar: "شقة بغرفتي نوم، المارينا",
  description: "Sea view, 1,250 sq ft, covered parking.",
  description_ar: null,
  attributes: { bedrooms: 2, area_sqft: 1250, furnished: true },
  price: "1500000.00",
  price_currency: "AED",
  address: "Marina Gate 2, Dubai Marina",
  photos: ["https://images.example.com/apt-0917/1.jpg"],
  status: "active",
  available_from: "2026-12-01",
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

export const offeringsExamples: OperationExamples = {
  "GET /offerings": { query: { limit: 20 }, response: { data: [offeringExample], next_cursor: null, has_more: false } },
  "GET /offerings/{id}": { path: { id: offeringExample.id }, response: offeringExample },
  "POST /offerings": {
    body: {
      title: offeringExample.title,
      price: "1500000.00",
      price_currency: "AED",
      attributes: offeringExample.attributes,
      photos: offeringExample.photos,
      available_from: "2026-12-01",
    },
    response: offeringExample,
  },
  "PATCH /offerings/{id}": {
    path: { id: offeringExample.id },
    body: { price: "1450000.00", attributes: { furnished: null, parking_spaces: 1 } },
    response: { ...offeringExample, price: "1450000.00", attributes: { bedrooms: 2, area_sqft: 1250, parking_spaces: 1 }, updated_at: EXAMPLE_LATER },
  },
};
