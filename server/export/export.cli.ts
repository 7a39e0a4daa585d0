// Operator CLI command for a tenant's export (spread into COMMANDS in server/cli/run-cli.ts):
//   npm run cli -- tenant export --tenant ID [--out FILE]
// Without --out (or with `--out -`) the JSON lines go to stdout and nothing else is printed there;
// with a file, the lines go to it and the command prints `{ file, counts }`.
import { createWriteStream } from "node:fs";
import path from "node:path";
import { once } from "node:events";
import type { Writable } from "node:stream";
import { type CliCommand, type Flags, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { database } from "../db/database";
import { scopeToTenant } from "../db/tenant-scope";
import { OPERATOR, recordAudit } from "../audit/record-audit";
import { openTenantExport } from "./export";

/** Writes every line to `out`, waiting whenever it is full (the export never runs ahead of the disk or pipe). */
export async function writeExport(lines: AsyncGenerator<string>, out: Writable): Promise<Record<string, number>> {
  let last = "";
  for await (const line of lines) {
    last = line;
    if (!out.write(line)) await once(out, "drain");
  }
  return (JSON.parse(last) as { data: { counts: Record<string, number> } }).data.counts;
}

const tenantExport: CliCommand = async (_args: string[], flags: Flags) => {
  const tenantId = uuidArg(requiredFlag(flags, "tenant"), "--tenant");
  if (flags.out === true) throw new UsageError("--out needs a file name (or - for stdout)");
  const file = typeof flags.out === "string" && flags.out !== "-" ? flags.out : null;
  const lines = await openTenantExport(tenantId);
  if (!lines) throw new UsageError(`tenant ${tenantId} not found`);
  await recordAudit(scopeToTenant(database().prisma, tenantId), {
    ...OPERATOR,
    action: "tenant.exported",
    targetType: "tenant",
    targetId: tenantId,
    details: { via: "cli" },
  });
  if (!file) {
    await writeExport(lines, process.stdout);
    return undefined;
  }
  const out = createWriteStream(file, { flags: "wx" });
  await once(out, "open").catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(err.code === "EEXIST" ? `--out: ${file} already exists` : `--out: cannot write ${file} (${err.code})`);
  });
  const counts = await writeExport(lines, out);
  out.end();
  await once(out, "finish");
  return { file, counts };
};
tenantExport.usage =
  "tenant export --tenant ID [--out FILE]\n  Every row of the tenant as JSON lines (docs/data-rights.md): to FILE (which must not exist), or to stdout without --out.";
// A running server (the embedded database) writes the file itself: the path is the CLI's, and a stream to
// the CLI's stdout cannot cross the operator socket.
tenantExport.forwardedFlags = (flags) => {
  if (typeof flags.out !== "string" || flags.out === "-")
    throw new UsageError("the server running on this embedded database runs the export: give --out FILE (stdout needs the server stopped)");
  return { ...flags, out: path.resolve(flags.out) };
};

export const EXPORT_COMMANDS = { "tenant export": tenantExport };
