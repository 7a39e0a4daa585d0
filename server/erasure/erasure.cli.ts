// Operator CLI command for erasing one customer (spread into COMMANDS in server/cli/run-cli.ts):
//   npm run cli -- customer erase --tenant ID --identifier PHONE_OR_EMAIL
//   npm run cli -- customer erase --tenant ID --conversation ID
// Prints the erasure's answer (the erased records' ids and counts, never an erased value).
import { type Flags, UsageError } from "../lib/cli";
import { tenantDbOfFlag } from "../tenants/tenants";
import { AppError } from "../lib/errors";
import { OPERATOR } from "../audit/record-audit";
import { eraseCustomer } from "./erasure.service";
import { eraseCustomerInput } from "./erasure.types";

const FLAG_OF: Record<string, string> = { customer_identifier: "identifier", conversation_id: "conversation" };

export const ERASURE_COMMANDS = {
  "customer erase": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    const input: Record<string, unknown> = {};
    if (flags.identifier !== undefined) input.customer_identifier = String(flags.identifier);
    if (flags.conversation !== undefined) input.conversation_id = String(flags.conversation);
    const parsed = eraseCustomerInput.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = String(issue.path[0] ?? "");
      throw new UsageError(issue.code === "custom" ? "give exactly one of --identifier or --conversation" : `--${FLAG_OF[field] ?? field}: ${issue.message}`);
    }
    try {
      return await eraseCustomer(db, parsed.data, OPERATOR);
    } catch (err) {
      if (err instanceof AppError && err.errorCode === "not_found")
        throw new UsageError(`conversation ${parsed.data.conversation_id} not found in this tenant`);
      if (err instanceof AppError && err.errorCode === "bad_request") throw new UsageError(`--identifier: ${err.message}`);
      throw err;
    }
  },
};
