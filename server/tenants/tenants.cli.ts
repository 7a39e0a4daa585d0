// Operator CLI: `tenant create --name N`.
import { requiredFlag } from "../lib/cli";
import { createTenant, tenantToWire } from "./tenants";

export const TENANT_COMMANDS = {
  "tenant create": async (_args: string[], flags: Record<string, string | boolean | undefined>) =>
    tenantToWire(await createTenant({ name: requiredFlag(flags, "name") })),
};
