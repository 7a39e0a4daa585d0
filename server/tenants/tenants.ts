import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { getDb } from "../db/client";
import { scopeToTenant, type TenantDb } from "../db/tenant-scope";
import { type Flags, requiredFlag, UsageError, uuidArg } from "../lib/cli";

function slugify(name: string): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "tenant";
  return `${base}-${randomBytes(3).toString("hex")}`;
}

export async function createTenant(input: { name: string; slug?: string }) {
  const db = await getDb();
  return db.tenant.create({ data: { name: input.name, slug: input.slug ?? slugify(input.name) } });
}

const column = resourceFields<Prisma.TenantGetPayload<object>>();
/** A tenant as the operator CLI prints it. */
const tenantResource = column.define(null, {
  id: column.value("id", z.string()),
  name: column.value("name", z.string()),
  slug: column.value("slug", z.string()),
  created_at: column.timestamp("createdAt", z.string()),
});
export const tenantToWire = (row: Prisma.TenantGetPayload<object>) => tenantResource.toWire(row);

/** The CLI's `--tenant ID`: that tenant's scoped database, or a usage error when it does not exist. */
export async function tenantDbOfFlag(flags: Flags): Promise<TenantDb> {
  const tenantId = uuidArg(requiredFlag(flags, "tenant"), "--tenant");
  const db = await getDb();
  if (!(await db.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw new UsageError(`tenant ${tenantId} not found`);
  return scopeToTenant(db, tenantId);
}
