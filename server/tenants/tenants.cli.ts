// Operator CLI: `tenant create|list|suspend|resume|delete|retention`.
import { type Flags, flagText, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { getDb } from "../db/client";
import { RETENTION_CLASSES, type RetentionClass, retentionUpdate, retentionView } from "../retention/retention";
import { deleteTenantData, listTenants, resumeTenant, scheduleTenantDeletion, setTenantRetention, suspendTenant } from "./lifecycle";
import { createTenant, tenantToWire } from "./tenants";

type Command = (args: string[], flags: Flags) => Promise<unknown>;

/** The tenant id of `tenant <action> ID` (or `--tenant ID`). */
const tenantArg = (args: string[], flags: Flags) => uuidArg(args[0] ?? flags.tenant, "the tenant id (tenant <action> <TENANT_ID>)");

/** `--messages-days 30`, `--events-days default` (back to the operator's period): the requested periods. */
function retentionFlags(flags: Flags): Partial<Record<RetentionClass, number | null>> {
  const requested: Partial<Record<RetentionClass, number | null>> = {};
  for (const cls of RETENTION_CLASSES) {
    const name = `${cls.replace(/_/g, "-")}-days`;
    if (!(name in flags)) continue;
    const text = flagText(flags[name])?.trim();
    if (text === "default") requested[cls] = null;
    else if (text && /^[0-9]{1,9}$/.test(text)) requested[cls] = Number(text);
    else throw new UsageError(`--${name} must be a whole number of days or 'default'`);
  }
  return requested;
}

export const TENANT_COMMANDS: Record<string, Command> = {
  "tenant create": async (_args, flags) => tenantToWire(await createTenant({ name: requiredFlag(flags, "name") })),
  /** Every tenant with its status and usage: rows per table, active API keys, webhook endpoints. */
  "tenant list": async () => listTenants(),
  "tenant suspend": async (args, flags) => suspendTenant(tenantArg(args, flags), flagText(flags.reason)?.slice(0, 500)),
  "tenant resume": async (args, flags) => resumeTenant(tenantArg(args, flags)),
  /**
   * Suspends the tenant and deletes all its rows after the grace period (TENANT_DELETE_GRACE_HOURS;
   * every process's retention job does it then). `--now` deletes them here and now, in batches; run
   * it again after an interruption to continue.
   */
  "tenant delete": async (args, flags) => {
    const tenantId = tenantArg(args, flags);
    const scheduled = await scheduleTenantDeletion(tenantId, { now: flags.now === true || flagText(flags.now) === "true" });
    if (scheduled.status !== "deleting") return scheduled;
    const result = await deleteTenantData(tenantId);
    return { ...scheduled, status: result.done ? "deleted" : "deleting", deleted: result.deleted };
  },
  /** Shows the tenant's retention periods, or sets them (`--messages-days N|default`, …): within the operator's bounds. */
  "tenant retention": async (args, flags) => {
    const tenantId = tenantArg(args, flags);
    const db = await getDb();
    const requested = retentionFlags(flags);
    if (Object.keys(requested).length) {
      const update = retentionUpdate(requested);
      if ("field" in update) throw new UsageError(`--${update.field.replace(/_/g, "-")}-days: ${update.message}`);
      await setTenantRetention(tenantId, update.data, requested);
    }
    const tenant = await db.tenant.findUnique({ where: { id: tenantId } });
    if (!tenant) throw new UsageError(`tenant ${tenantId} not found`);
    return { tenant_id: tenantId, retention: retentionView(tenant) };
  },
};
