// An API key's wire shape (never its salt or hash), declared once: the dashboard and the CLI answer it.
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";

const column = resourceFields<Prisma.ApiKeyGetPayload<object>>();
export const apiKeyResource = column.define(null, {
  id: column.value("id", z.string()),
  name: column.value("name", z.string()),
  prefix: column.value("prefix", z.string()),
  last4: column.value("last4", z.string()),
  scopes: column.value("scopes", z.array(z.string())),
  created_at: column.timestamp("createdAt", z.string()),
  last_used_at: column.timestamp("lastUsedAt", z.string().nullable()),
  revoked_at: column.timestamp("revokedAt", z.string().nullable()),
});
export const apiKeySchema = apiKeyResource.schema;
