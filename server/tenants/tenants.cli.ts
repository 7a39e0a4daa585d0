// Operator CLI: `tenant create|list|suspend|resume|delete` (`tenant retention` is in server/retention/retention.cli.ts).
import { type Flags, flagText, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { deleteTenantData, listTenants, resumeTenant, scheduleTenantDeletion, suspendTenant } from "./lifecycle";
import { createTenant, tenantToWire } from "./tenants";

/** A tenant's name, as long as the dashboard's other names (keys, members). */
const MAX_TENANT_NAME = 100;

type Command = (args: string[], flags: Flags) => Promise<unknown>;

/** The tenant id of `tenant <action> ID` (or `--tenant ID`). */
export const tenantArg = (args: string[], flags: Flags) => uuidArg(args[0] ?? flags.tenant, "the tenant id (tenant <action> <TENANT_ID>)");

export const TENANT_COMMANDS: Record<string, Command> = {
  "tenant create": async (_args, flags) => {
    const name = requiredFlag(flags, "name");
    if (name.length > MAX_TENANT_NAME) throw new UsageError(`--name must be at most ${MAX_TENANT_NAME} characters`);
    return tenantToWire(await createTenant({ name }));
  },
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
};
