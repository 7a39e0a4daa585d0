// Operator CLI commands for channel connections (spread into COMMANDS in server/cli/run-cli.ts):
//   npm run cli -- channel connect --tenant ID --provider twilio --channel sms --address +97143001234 \
//       --account-sid AC… --auth-token …            (credentials: one flag per field, kebab-case)
//   npm run cli -- channel connect --tenant ID --id CONNECTION_ID [--status disabled] [--address …] [credential flags]
//     (changes a connection; the credentials are required again when the provider or address changes)
//   npm run cli -- channel list --tenant ID
//   npm run cli -- channel disconnect --tenant ID CONNECTION_ID
//   npm run cli -- channel move --provider twilio --address +97143001234 --to-tenant ID --reason "…" \
//       [--channel sms] [credential flags]     (gives an address another tenant holds to this one;
//       without credentials the moved connection is disabled until its new owner enters theirs)
// Output never includes credentials (only `has_credentials`).
import { z } from "zod";
import { type Flags, flagText, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { database } from "../db/database";
import { tenantDbOfFlag } from "../tenants/tenants";
import { fromZodError } from "../lib/errors";
import { OPERATOR } from "../audit/record-audit";
import { CHANNEL_PROVIDERS, CREDENTIAL_FIELDS, type ChannelProvider } from "./providers";
import { connectChannelInput, moveChannelAddressInput, updateChannelConnectionInput } from "./channels.types";
import { connectChannel, disconnectChannel, listChannelConnections, moveChannelAddress, updateChannelConnection } from "./channel-connections";

const str = flagText;
const kebab = (field: string) => field.replace(/_/g, "-");

/** The credential flags given for a provider (`--auth-token` → auth_token), or undefined when none is. */
function credentialsFrom(flags: Flags, provider: ChannelProvider | undefined): Record<string, string> | undefined {
  const fields = provider ? CREDENTIAL_FIELDS[provider] : CHANNEL_PROVIDERS.flatMap((p) => CREDENTIAL_FIELDS[p]);
  const given = Object.fromEntries(fields.map((f) => [f.name, str(flags[kebab(f.name)])]).filter(([, v]) => v !== undefined));
  return Object.keys(given).length ? (given as Record<string, string>) : undefined;
}

/** A refused input (e.g. an address another tenant holds) is the operator's to fix: exit code 2. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { errorCode?: string }).errorCode;
    if (code === "bad_request" || code === "conflict" || code === "not_found") throw new UsageError((err as Error).message);
    throw err;
  }
}

export const channelCommands = {
  "channel connect": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    const provider = str(flags.provider) as ChannelProvider | undefined;
    const common = { provider, channel: str(flags.channel), address: str(flags.address), status: str(flags.status) };
    const id = str(flags.id);
    if (id !== undefined) {
      const parsed = updateChannelConnectionInput.safeParse({ id, ...common, credentials: credentialsFrom(flags, provider) });
      if (!parsed.success) throw new UsageError(fromZodError(parsed.error).message);
      return asUsage(() => updateChannelConnection(db, parsed.data, OPERATOR));
    }
    const parsed = connectChannelInput.safeParse({ ...common, credentials: credentialsFrom(flags, provider) ?? {} });
    if (!parsed.success) throw new UsageError(fromZodError(parsed.error).message);
    return asUsage(() => connectChannel(db, parsed.data, OPERATOR));
  },
  "channel list": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    return listChannelConnections(db, { limit: 100, cursor: str(flags.cursor) });
  },
  "channel disconnect": async (args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    const id = args[0] ?? str(flags.id);
    if (!id || !z.uuid().safeParse(id).success) throw new UsageError("CONNECTION_ID must be a uuid");
    return disconnectChannel(db, id.toLowerCase(), OPERATOR);
  },
  "channel move": async (_args: string[], flags: Flags) => {
    const toTenant = uuidArg(requiredFlag(flags, "to-tenant"), "--to-tenant");
    if (!(await database().prisma.tenant.findUnique({ where: { id: toTenant }, select: { id: true } }))) throw new UsageError(`tenant ${toTenant} not found`);
    const provider = str(flags.provider) as ChannelProvider | undefined;
    const parsed = moveChannelAddressInput.safeParse({
      provider,
      address: str(flags.address),
      to_tenant: toTenant,
      channel: str(flags.channel),
      credentials: credentialsFrom(flags, provider),
      reason: str(flags.reason),
    });
    if (!parsed.success) throw new UsageError(fromZodError(parsed.error).message);
    return asUsage(() => moveChannelAddress(parsed.data, OPERATOR));
  },
};
