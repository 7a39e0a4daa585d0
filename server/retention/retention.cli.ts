// Operator CLI: `retention purge [--tenant ID]` runs the retention job now (the purge, then the due
// tenant deletions; or only that tenant's purge) and prints what it changed; `tenant retention ID
// [--messages-days N|default] …` shows or sets a tenant's own periods, within the operator's bounds.
import { type Flags, flagText, UsageError, uuidArg } from "../lib/cli";
import { database } from "../db/database";
import { setTenantRetention } from "../tenants/lifecycle";
import { tenantArg } from "../tenants/tenants.cli";
import { purgeExpired, RETENTION_CLASSES, type RetentionClass, retentionUpdate, retentionView } from "./retention";
import { runRetentionJob } from "./retention-job";

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

export const RETENTION_COMMANDS: Record<string, (args: string[], flags: Flags) => Promise<unknown>> = {
  "retention purge": async (_args, flags) =>
    flags.tenant === undefined ? runRetentionJob() : { purged: await purgeExpired({ tenantId: uuidArg(flags.tenant, "--tenant") }) },
  /** Shows the tenant's retention periods, or sets them (`--messages-days N|default`, …): within the operator's bounds. */
  "tenant retention": async (args, flags) => {
    const tenantId = tenantArg(args, flags);
    const db = database().prisma;
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
