// Operator CLI: `retention purge [--tenant ID]` runs the retention job now (the purge, then the due
// tenant deletions; or only that tenant's purge) and prints what it changed.
import { type Flags, uuidArg } from "../lib/cli";
import { purgeExpired } from "./retention";
import { runRetentionJob } from "./retention-job";

export const RETENTION_COMMANDS: Record<string, (args: string[], flags: Flags) => Promise<unknown>> = {
  "retention purge": async (_args, flags) =>
    flags.tenant === undefined ? runRetentionJob() : { purged: await purgeExpired({ tenantId: uuidArg(flags.tenant, "--tenant") }) },
};
