// The operator CLI (`npm run cli -- <group> <action> …`, JSON on stdout): the table of every
// domain's commands (`server/<domain>/<domain>.cli.ts`) and the one place that runs them.
import { closeDb } from "../db/client";
import { EmbeddedDatabaseBusyError } from "../db/embedded-lock";
import { type CliCommand, type Flags, UsageError } from "../lib/cli";
import { TENANT_COMMANDS } from "../tenants/tenants.cli";
import { API_KEY_COMMANDS } from "../auth/api-keys.cli";
import { DASHBOARD_COMMANDS } from "../dashboard/dashboard.cli";
import { WEBHOOK_COMMANDS } from "../webhooks/webhooks.cli";
import { crmCommands } from "../crm/crm.cli";
import { channelCommands } from "../channels/channels.cli";
import { RETENTION_COMMANDS } from "../retention/retention.cli";

export { parseCliArgs } from "../lib/cli";

/** Commands by "<group> <action>". */
export const COMMANDS: Record<string, CliCommand> = {
  ...DASHBOARD_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...crmCommands,
  ...channelCommands,
  ...TENANT_COMMANDS,
  ...API_KEY_COMMANDS,
  ...RETENTION_COMMANDS,
};

export async function runCli(positionals: string[], flags: Flags): Promise<number> {
  const [group, action, ...args] = positionals;
  const command = COMMANDS[`${group} ${action}`];
  try {
    if (!command) throw new UsageError(`unknown command '${positionals.join(" ")}'. Commands: ${Object.keys(COMMANDS).join(", ")}`);
    const result = await command(args, flags);
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  } catch (err) {
    const message = err instanceof UsageError || err instanceof EmbeddedDatabaseBusyError ? err.message : `failed: ${(err as Error).message}`;
    process.stderr.write(JSON.stringify({ error: message }) + "\n");
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await closeDb().catch(() => {});
  }
}
