// The operator CLI (`npm run cli -- <group> <action> …`, JSON on stdout): the table of every
// domain's commands (`server/<domain>/<domain>.cli.ts`), their help, and the one place that runs
// them. Exit codes: 0 done, 1 failed, 2 a usage error (unknown command, missing or malformed flag).
// Errors are one plain line on stderr. On the embedded database, a command given while a server
// (`npm start`) holds it runs in that server, through its operator socket (operator-socket.ts).
import { closeDatabase, openDatabase } from "../db/database";
import { dataDir, databaseKind } from "../db/location";
import { EmbeddedDatabaseBusyError, embeddedLockHolder } from "../db/embedded-lock";
import { type CliCommand, type Flags, UsageError } from "../lib/cli";
import { TENANT_COMMANDS } from "../tenants/tenants.cli";
import { API_KEY_COMMANDS } from "../auth/api-keys.cli";
import { DASHBOARD_COMMANDS } from "../dashboard/dashboard.cli";
import { WEBHOOK_COMMANDS } from "../webhooks/webhooks.cli";
import { crmCommands } from "../crm/crm.cli";
import { channelCommands } from "../channels/channels.cli";
import { COMMAND_USAGE } from "./usage";
import { sendToOperatorSocket } from "./operator-socket-client";
import { ERASURE_COMMANDS } from "../erasure/erasure.cli";
import { EXPORT_COMMANDS } from "../export/export.cli";
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
  ...ERASURE_COMMANDS,
  ...EXPORT_COMMANDS,
  ...RETENTION_COMMANDS,
};

/** What a command printed and its exit code (a server runs it for a CLI beside it and sends this back). */
export type CliOutcome = { code: number; stdout: string; stderr: string };

const PROGRAM = "npm run cli --";

const usageOf = (name: string): string => COMMANDS[name]?.usage ?? COMMAND_USAGE[name] ?? `${name} …\n  (no usage text: see server/<domain>/<domain>.cli.ts)`;

function overview(): string {
  const groups = new Map<string, string[]>();
  for (const name of Object.keys(COMMANDS).sort()) {
    const [group] = name.split(" ");
    groups.set(group, [...(groups.get(group) ?? []), name]);
  }
  const lines = [...groups.values()].flatMap((names) => names.map((name) => `  ${usageOf(name).split("\n")[0]}`));
  return [
    `Usage: ${PROGRAM} <group> <action> [arguments] [--flag value …]`,
    "",
    "Operator commands. Each prints JSON on stdout; errors go to stderr.",
    "Exit codes: 0 done, 1 failed, 2 wrong usage.",
    `Help on one command: ${PROGRAM} <group> <action> --help`,
    "",
    "Commands:",
    ...lines,
    "",
    "The database: DATABASE_URL (PostgreSQL), else the embedded one in DATA_DIR (.data/). While `npm start` runs on",
    "the embedded database, commands run in that server (PGlite allows one process).",
    "",
  ].join("\n");
}

const ok = (stdout: string): CliOutcome => ({ code: 0, stdout, stderr: "" });
const usageError = (message: string, hint: string): CliOutcome => ({ code: 2, stdout: "", stderr: `error: ${message}\n${hint}\n` });

/** Help, or the command's run, as its printed outcome. Leaves the database open (the server's stays open). */
export async function executeCommand(positionals: string[], flags: Flags): Promise<CliOutcome> {
  const [group, action, ...args] = positionals;
  const name = `${group} ${action}`;
  const command = COMMANDS[name];
  const helpHint = `Run '${PROGRAM} --help' for the list of commands.`;
  if (!group || (group === "help" && !action)) return flags.help || group === "help" ? ok(overview()) : usageError("no command given", helpHint);
  if (!command) {
    const inGroup = Object.keys(COMMANDS).filter((n) => n.startsWith(`${group} `));
    if (inGroup.length && (flags.help || !action)) {
      if (flags.help) return ok(`${inGroup.map((n) => `Usage: ${PROGRAM} ${usageOf(n)}`).join("\n\n")}\n`);
      return usageError(`'${group}' needs an action: ${inGroup.map((n) => n.split(" ")[1]).join(", ")}`, helpHint);
    }
    return usageError(`unknown command '${positionals.join(" ")}'`, helpHint);
  }
  if (flags.help) return ok(`Usage: ${PROGRAM} ${usageOf(name)}\n`);
  try {
    await openDatabase(); // every command reads or writes it (in the server: already open)
    const result = await command(args, flags);
    // A command that wrote its own output (an export to stdout) answers undefined.
    return ok(result === undefined ? "" : `${JSON.stringify(result)}\n`);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, `Usage: ${PROGRAM} ${usageOf(name).split("\n")[0]}`);
    const message = err instanceof EmbeddedDatabaseBusyError ? err.message : `failed: ${lastLine((err as Error).message)}`;
    return { code: 1, stdout: "", stderr: `error: ${message}\n` };
  }
}

/** A message's last non-blank line: Prisma's errors open with the invocation and source excerpt, and end with the cause. */
const lastLine = (message: string): string =>
  message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? message;

/** The CLI process: runs the command (in the running server, when one holds the embedded database), prints, exits with its code. */
export async function runCli(positionals: string[], flags: Flags): Promise<number> {
  try {
    const forwarded = await forwardToRunningServer(positionals, flags);
    const outcome = forwarded ?? (await executeCommand(positionals, flags));
    if (outcome.stdout) process.stdout.write(outcome.stdout);
    if (outcome.stderr) process.stderr.write(outcome.stderr);
    return outcome.code;
  } finally {
    await closeDatabase().catch(() => {});
  }
}

/** On the embedded database held by a server that takes commands: its outcome; otherwise null (run here). */
async function forwardToRunningServer(positionals: string[], flags: Flags): Promise<CliOutcome | null> {
  if (databaseKind() !== "pglite" || flags.help || !positionals.length) return null;
  const holder = embeddedLockHolder(dataDir());
  if (!holder?.socket) return null;
  const name = positionals.slice(0, 2).join(" ");
  const forwarding = COMMANDS[name]?.forwardedFlags;
  let sent = flags;
  try {
    if (forwarding) sent = forwarding(flags);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, `Usage: ${PROGRAM} ${usageOf(name).split("\n")[0]}`);
    throw err;
  }
  return sendToOperatorSocket(holder.socket, { positionals, flags: sent });
}
