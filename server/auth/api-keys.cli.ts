// Operator CLI: `key create --tenant ID --name N --scopes a,b` (prints the key once),
// `key revoke KEY_ID`, `key list --tenant ID`.
import { database } from "../db/database";
import { scopeToTenant } from "../db/tenant-scope";
import { OPERATOR } from "../audit/record-audit";
import { type Flags, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { tenantDbOfFlag } from "../tenants/tenants";
import { apiKeyToWire, issueApiKey, listApiKeys, revokeApiKey } from "./api-keys";
import { SCOPES, type Scope } from "./principal";

export const API_KEY_COMMANDS = {
  "key create": async (_args: string[], flags: Flags) => {
    uuidArg(requiredFlag(flags, "tenant"), "--tenant");
    const scopes = requiredFlag(flags, "scopes")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length || !scopes.length) throw new UsageError(`--scopes must be a comma list of: ${SCOPES.join(", ")}`);
    const db = await tenantDbOfFlag(flags);
    const { key, plaintext } = await issueApiKey(db, { name: requiredFlag(flags, "name"), scopes: scopes as Scope[] }, OPERATOR);
    return { id: key.id, key: plaintext, prefix: key.prefix, scopes: key.scopes, tenant_id: key.tenantId };
  },

  "key revoke": async (args: string[]) => {
    const keyId = uuidArg(args[0], "KEY_ID");
    const db = database().prisma;
    const key = await db.apiKey.findUnique({ where: { id: keyId }, select: { tenantId: true } });
    if (!key) throw new UsageError(`key ${keyId} not found`);
    return { ...apiKeyToWire(await revokeApiKey(scopeToTenant(db, key.tenantId), keyId, OPERATOR)), tenant_id: key.tenantId };
  },

  "key list": async (_args: string[], flags: Flags) => ({ data: (await listApiKeys(await tenantDbOfFlag(flags))).map(apiKeyToWire) }),
};
