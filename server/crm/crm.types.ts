import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { unknownFieldMessage } from "../lib/strict-body";
import { CRM_PROVIDERS } from "./drivers/providers";

/** The canonical key whose mapping names HubSpot's unique property for idempotent upserts. */
export const IDEMPOTENCY_CANONICAL_KEY = "idempotency_key";

const KEY = /^[A-Za-z0-9_.-]{1,100}$/;
const keyMessage = "must be 1 to 100 letters, digits, '_', '.' or '-'";
const OBJECT = /^[A-Za-z0-9_-]{1,100}$/;

const fieldValue = z.union([z.string().max(65_536), z.number(), z.boolean(), z.null()]);

export const createRecordInput = z.strictObject(
  {
    object: z
      .string()
      .regex(OBJECT, { message: "must be 1 to 100 letters, digits, '_' or '-'" })
      .describe("The CRM object type, e.g. `contacts` (HubSpot) or the http CRM's collection name"),
    fields: z
      .record(z.string().regex(KEY, { message: keyMessage }), fieldValue)
      .refine((f) => Object.keys(f).length > 0, { message: "must contain at least one field" })
      .describe("Canonical keys and their values; each key is translated through the tenant's field mapping"),
    idempotency_key: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe(
        "Forwarded to the CRM so a retried call does not create a second record: the `Idempotency-Key` header (http), or an upsert by the unique property mapped for `idempotency_key` (HubSpot)",
      ),
  },
  unknownFieldMessage(),
);

export const crmRecordSchema = z
  .object({
    provider: z.enum(CRM_PROVIDERS),
    object: z.string(),
    crm_record_id: z.string().describe("The record's id in the CRM"),
    fields: z.record(z.string(), fieldValue).describe("The fields as written, under the CRM's keys"),
  })
  .meta({ id: "CrmRecord" });

const fieldMapping = z.record(z.string().regex(KEY, { message: keyMessage }), z.string().trim().min(1).max(200)).describe("Canonical key -> CRM key");

const baseUrl = z
  // http passes here only for the development allowance (loopback); setCrmConnection decides.
  .url({ protocol: /^https?$/, message: "must be an https URL" })
  .max(2048)
  // zod runs refinements after a failed format check too: only judge parsable URLs here.
  .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), { message: "must not contain credentials; use the token field" })
  .refine((u) => !URL.canParse(u) || (!new URL(u).search && !new URL(u).hash), { message: "must not have a query or fragment" });

export const setCrmConnectionInput = z.strictObject(
  {
    provider: z.enum(CRM_PROVIDERS),
    base_url: baseUrl,
    token: z.string().trim().min(1).max(4096).optional().describe("Bearer token; omit to keep the stored one (only while provider and base_url stay the same)"),
    field_mapping: fieldMapping.optional().describe("Omit to keep the stored mapping"),
  },
  unknownFieldMessage(),
);

/**
 * "Test connection" before saving: the form's provider, base URL and (optional) token. Without a token
 * the stored one is used, and only while provider and base_url are the stored ones (as when saving).
 */
export const testCrmConnectionInput = z
  .strictObject(
    {
      provider: z.enum(CRM_PROVIDERS),
      base_url: baseUrl,
      token: z.string().trim().min(1).max(4096).optional().describe("Bearer token to test; omit to test the stored one"),
    },
    unknownFieldMessage(),
  )
  .optional();
export type TestCrmConnectionInput = z.infer<typeof testCrmConnectionInput>;

export const updateCrmMappingInput = z.strictObject({ field_mapping: fieldMapping }, unknownFieldMessage());

/** The connection as the dashboard sees it: never the credentials, only whether they exist. */
const column = resourceFields<Prisma.CrmConnectionGetPayload<object>>();
/** The CRM connection on the wire: its credentials never are, only whether it has them. */
export const crmConnectionResource = column.define("CrmConnection", {
  provider: column.value("provider", z.enum(CRM_PROVIDERS)),
  base_url: column.value("baseUrl", z.string()),
  field_mapping: column.json("fieldMapping", z.record(z.string(), z.string())),
  has_credentials: column.computed(z.boolean(), (row) => row.credentialsEncrypted.length > 0),
  created_at: column.timestamp("createdAt", z.string()),
  updated_at: column.timestamp("updatedAt", z.string()),
});
export const crmConnectionSchema = crmConnectionResource.schema;

export type CreateRecordInput = z.infer<typeof createRecordInput>;
export type CrmRecord = z.infer<typeof crmRecordSchema>;
export type SetCrmConnectionInput = z.infer<typeof setCrmConnectionInput>;
export type CrmConnectionWire = z.infer<typeof crmConnectionSchema>;

/** What "Test connection" found: `ok` on a 2xx; otherwise the CRM's status, a timeout, a refused target or a network error. */
export const crmConnectionTestSchema = z.object({
  ok: z.boolean(),
  outcome: z.enum(["ok", "error_status", "timeout", "refused", "network"]),
  status_code: z.number().int().nullable().describe("The CRM's HTTP status, when it answered"),
  duration_ms: z.number().int(),
  message: z.string().describe("One sentence for the dashboard; never holds the credentials"),
  request: z.string().describe("The call made, e.g. `GET https://api.hubapi.com/crm/v3/objects/contacts?limit=1`"),
  tested_at: z.string(),
});
export type CrmConnectionTest = z.infer<typeof crmConnectionTestSchema>;
