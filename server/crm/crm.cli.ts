// Operator CLI commands for the CRM connection (spread into COMMANDS in server/cli/run-cli.ts):
//   npm run cli -- crm set --tenant ID --provider http|hubspot --base-url URL [--token T] [--mapping name=firstname,phone=phone]
//     (--token is required for a new connection and whenever the provider or base URL changes)
//   npm run cli -- crm show --tenant ID
//   npm run cli -- crm delete --tenant ID
// Output never includes the token (only `has_credentials`).
import { type Flags, UsageError } from "../lib/cli";
import { tenantDbOfFlag } from "../tenants/tenants";
import { fromZodError } from "../lib/errors";
import { OPERATOR } from "../audit/record-audit";
import { setCrmConnectionInput } from "./crm.types";
import { deleteCrmConnection, getCrmConnection, setCrmConnection } from "./crm-connection";

/** `name=firstname,phone=phone` -> { name: "firstname", phone: "phone" } */
async function parseMapping(text: string): Promise<Record<string, string>> {
  const mapping: Record<string, string> = {};
  for (const pair of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf("=");
    if (eq <= 0 || eq === pair.length - 1) throw new UsageError(`--mapping entries must be canonical=crm_key (got '${pair}')`);
    mapping[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return mapping;
}

const str = (v: string | boolean | undefined) => (typeof v === "string" ? v : undefined);

export const crmCommands = {
  "crm set": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    const mapping = str(flags.mapping);
    const parsed = setCrmConnectionInput.safeParse({
      provider: str(flags.provider),
      base_url: str(flags["base-url"]),
      token: str(flags.token),
      field_mapping: mapping === undefined ? undefined : await parseMapping(mapping),
    });
    if (!parsed.success) throw new UsageError(fromZodError(parsed.error).message);
    try {
      return await setCrmConnection(db, parsed.data, OPERATOR);
    } catch (err) {
      // A refused input (e.g. no token for a new connection) is the operator's to fix.
      if ((err as { errorCode?: string }).errorCode === "bad_request") throw new UsageError((err as Error).message);
      throw err;
    }
  },
  "crm show": async (_args: string[], flags: Flags) => ({ connection: await getCrmConnection(await tenantDbOfFlag(flags)) }),
  "crm delete": async (_args: string[], flags: Flags) => deleteCrmConnection(await tenantDbOfFlag(flags), OPERATOR),
};
