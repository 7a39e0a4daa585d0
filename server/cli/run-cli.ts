import { z } from "zod";
import { closeDb, getDb } from "../db/client";
import { EmbeddedDatabaseBusyError } from "../db/embedded-lock";
import { scopeToTenant } from "../db/tenant-scope";
import { apiKeyToWire, issueApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys";
import { SCOPES, type Scope } from "../auth/principal";
import { OPERATOR } from "../audit/record-audit";
import { createTenant, tenantToWire } from "../tenants/tenants";
import { DASHBOARD_COMMANDS } from "../dashboard/dashboard.cli";
import { WEBHOOK_COMMANDS } from "../webhooks/webhooks.cli";
import { crmCommands } from "../crm/crm.cli";
import { channelCommands } from "../channels/channels.cli";

export class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;
type Command = (args: string[], flags: Flags) => Promise<unknown>;

const flag = (flags: Flags, name: string): string => {
  const value = flags[name];
  if (typeof value !== "string" || !value.trim()) throw new UsageError(`--${name} is required`);
  return value.trim();
};
const uuidArg = (value: string | undefined, what: string): string => {
  if (!value || !z.uuid().safeParse(value).success) throw new UsageError(`${what} must be a uuid`);
  return value.toLowerCase();
};

async function tenantDb(tenantId: string) {
  const db = await getDb();
  if (!(await db.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) throw new UsageError(`tenant ${tenantId} not found`);
  return scopeToTenant(db, tenantId);
}

/** Commands by "<group> <action>"; other domains register theirs here too. */
export const COMMANDS: Record<string, Command> = {
  ...DASHBOARD_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...crmCommands,
  ...channelCommands,
  "tenant create": async (_args, flags) => tenantToWire(await createTenant({ name: flag(flags, "name") })),

  "key create": async (_args, flags) => {
    const tenantId = uuidArg(flag(flags, "tenant"), "--tenant");
    const scopes = flag(flags, "scopes")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length || !scopes.length) throw new UsageError(`--scopes must be a comma list of: ${SCOPES.join(", ")}`);
    const { key, plaintext } = await issueApiKey(await tenantDb(tenantId), { name: flag(flags, "name"), scopes: scopes as Scope[] }, OPERATOR);
    return { id: key.id, key: plaintext, prefix: key.prefix, scopes: key.scopes, tenant_id: key.tenantId };
  },

  "key revoke": async (args) => {
    const keyId = uuidArg(args[0], "KEY_ID");
    const db = await getDb();
    const key = await db.apiKey.findUnique({ where: { id: keyId }, select: { tenantId: true } });
    if (!key) throw new UsageError(`key ${keyId} not found`);
    return { ...apiKeyToWire(await revokeApiKey(scopeToTenant(db, key.tenantId), keyId, OPERATOR)), tenant_id: key.tenantId };
  },

  "key list": async (_args, flags) => {
    const tenantId = uuidArg(flag(flags, "tenant"), "--tenant");
    return { data: (await listApiKeys(await tenantDb(tenantId))).map(apiKeyToWire) };
  },
};

/** `--flag value`, `--flag=value`, or a bare `--flag` (true); everything else is positional. */
export function parseCliArgs(argv: string[]): { positionals: string[]; flags: Flags } {
  const positionals: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    if (eq > 0) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[arg.slice(2)] = argv[++i];
    else flags[arg.slice(2)] = true;
  }
  return { positionals, flags };
}

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
