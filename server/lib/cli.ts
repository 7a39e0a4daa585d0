// The operator CLI's shared pieces (`npm run cli -- <group> <action> …`): argument parsing and the
// usage errors every domain's commands (`server/<domain>/<domain>.cli.ts`) raise. Usage errors
// exit 2 with their message; anything else exits 1 (server/cli/run-cli.ts).
import { z } from "zod";

export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;
export type CliCommand = (args: string[], flags: Flags) => Promise<unknown>;

/** A flag's text, or undefined when absent or given bare (`--flag` alone is `true`). */
export const flagText = (value: string | boolean | undefined): string | undefined => (typeof value === "string" ? value : undefined);

/** A required, non-blank flag. */
export function requiredFlag(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || !value.trim()) throw new UsageError(`--${name} is required`);
  return value.trim();
}

/** A uuid (a flag's value or a positional), lower-cased; `what` names it in the error. */
export function uuidArg(value: unknown, what: string): string {
  if (typeof value !== "string" || !z.uuid().safeParse(value.trim()).success) throw new UsageError(`${what} must be a uuid`);
  return value.trim().toLowerCase();
}

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
