// Operator CLI: `user create` and `member add` (spread into COMMANDS in server/cli/run-cli.ts).
import { z } from "zod";
import { AppError } from "../lib/errors";
import { type Flags, requiredFlag, UsageError } from "../lib/cli";
import { addMember, createDashboardUser } from "./users";
import { ROLES } from "./dashboard.types";

// Domain errors (duplicate email, unknown tenant) are usage errors of the command line.
const asUsage = async <T>(run: () => Promise<T>, notFoundMessage: string): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.errorCode === "not_found" ? notFoundMessage : err.message);
    if (err instanceof Error && /password/.test(err.message)) throw new UsageError(err.message);
    throw err;
  }
};

export const DASHBOARD_COMMANDS = {
  "user create": async (_args: string[], flags: Flags) => {
    const email = requiredFlag(flags, "email").trim();
    if (!z.email().safeParse(email).success) throw new UsageError("--email must be an email address");
    const name = typeof flags.name === "string" && flags.name.trim() ? flags.name.trim() : email.split("@")[0];
    return asUsage(() => createDashboardUser({ email, password: requiredFlag(flags, "password"), name }), "");
  },

  "member add": async (_args: string[], flags: Flags) => {
    const tenantId = requiredFlag(flags, "tenant").trim().toLowerCase();
    if (!z.uuid().safeParse(tenantId).success) throw new UsageError("--tenant must be a uuid");
    const role = requiredFlag(flags, "role").trim();
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of: ${ROLES.join(", ")}`);
    const email = requiredFlag(flags, "user-email").trim();
    return asUsage(() => addMember({ tenantId, email, role: role as (typeof ROLES)[number] }), `tenant ${tenantId} or user ${email} not found`);
  },
};
