import { randomBytes } from "node:crypto";
import { getDb } from "../db/client";
import { scopeToTenant, type TenantDb } from "../db/tenant-scope";
import { type Flags, requiredFlag, UsageError, uuidArg } from "../shared/cli";

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

export const tenantToWire = (t: { id: string; name: string; slug: string; createdAt: Date }) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  created_at: t.createdAt.toISOString(),
});

/** The CLI's `--tenant ID`: that tenant's scoped database, or a usage error when it does not exist. */
export async function tenantDbOfFlag(flags: Flags): Promise<TenantDb> {
  const tenantId = uuidArg(requiredFlag(flags, "tenant"), "--tenant");
  const db = await getDb();
  if (!(await db.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw new UsageError(`tenant ${tenantId} not found`);
  return scopeToTenant(db, tenantId);
}
