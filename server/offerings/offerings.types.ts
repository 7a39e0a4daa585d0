import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { attributesInput, calendarDate, decimalInput, invalid, jsonObject, uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";

const column = resourceFields<Prisma.OfferingGetPayload<object>>();
const patch = { patch: true } as const;

/** The offering, declared once: wire schema, row mapping, SQL select list and patchable columns. */
export const offeringResource = column.define("Offering", {
  id: column.value("id", z.uuid()),
  external_id: column.value("externalId", z.string().nullable(), patch),
  reference_number: column.value("referenceNumber", z.string().nullable(), patch),
  title: column.value("title", z.string(), patch),
  title_ar: column.value("titleAr", z.string().nullable().describe("Arabic title"), patch),
  description: column.value("description", z.string().nullable(), patch),
  description_ar: column.value("descriptionAr", z.string().nullable(), patch),
  attributes: column.json("attributes", jsonObject().describe("Vertical-specific keys (bedrooms, area, service type, duration in minutes, …)")),
  price: column.decimal("price", z.string().describe("Decimal in plain notation, as a string to keep precision"), patch),
  price_currency: column.value("priceCurrency", z.string().length(3).describe("ISO 4217 code"), patch),
  address: column.value("address", z.string().nullable(), patch),
  photos: column.value("photos", z.array(z.string()), patch),
  status: column.value("status", z.string(), patch),
  available_from: column.date("availableFrom", z.string().nullable().describe("YYYY-MM-DD"), patch),
  created_at: column.timestamp("createdAt", z.string().describe("ISO 8601 date-time")),
  updated_at: column.timestamp("updatedAt", z.string().describe("ISO 8601 date-time")),
});
export const offeringSchema = offeringResource.schema;

const strictBody = unknownFieldMessage(new Set(["assigned_user_id", "deleted_at", "metadata"]));

const fields = {
  external_id: z.string().max(120).nullable(),
  reference_number: z.string().max(120).nullable(),
  title: z.string().min(1).max(500),
  title_ar: z.string().max(500).nullable(),
  description: z.string().max(10000).nullable(),
  description_ar: z.string().max(10000).nullable(),
  attributes: attributesInput().describe(
    "Shallow-merged on update: keys overwrite or add, a null value deletes the key; the merged object is at most 16 KiB as JSON",
  ),
  price: decimalInput().describe("A number >= 0, or a decimal string matching ^[0-9]+(\\.[0-9]+)?$ for values that lose precision as numbers"),
  price_currency: z.string(invalid("must be a 3-letter ISO 4217 code like USD")).regex(/^[A-Z]{3}$/, { message: "must be a 3-letter ISO 4217 code like USD" }),
  address: z.string().max(500).nullable(),
  // Clients render these as links and images: only http(s), never javascript:, data: and the like.
  photos: z.array(z.url({ protocol: /^https?$/, ...invalid("must be an http or https URL") }).max(2048)).max(20),
  status: z.string().max(40),
  available_from: calendarDate().nullable(),
};

export const createOfferingInput = z.strictObject(
  {
    ...fields,
    external_id: fields.external_id.optional(),
    reference_number: fields.reference_number.optional(),
    title_ar: fields.title_ar.optional(),
    description: fields.description.optional(),
    description_ar: fields.description_ar.optional(),
    attributes: fields.attributes.optional(),
    address: fields.address.optional(),
    photos: fields.photos.optional(),
    status: fields.status.optional(),
    available_from: fields.available_from.optional(),
  },
  strictBody,
);

const updatableKeys = Object.keys(fields);
export const updateOfferingInput = z
  .strictObject(
    {
      id: uuid().describe("Offering id"),
      ...(Object.fromEntries(Object.entries(fields).map(([k, s]) => [k, s.optional()])) as {
        [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
      }),
    },
    strictBody,
  )
  .refine((body) => updatableKeys.some((k) => k in body), {
    message: "request body must contain at least one updatable field",
  });

export const listOfferingsInput = z.object(pageQuery);
export const offeringIdInput = z.object({ id: uuid().describe("Offering id") });
export const offeringListSchema = listEnvelope(offeringSchema, "OfferingList");

export type Offering = z.infer<typeof offeringSchema>;
export type CreateOfferingInput = z.infer<typeof createOfferingInput>;
export type UpdateOfferingInput = z.infer<typeof updateOfferingInput>;
