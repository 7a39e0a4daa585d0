// The operator CLI's shared pieces (`npm run cli -- <group> <action> …`): argument parsing and the
// usage errors every domain's commands (`server/<domain>/<domain>.cli.ts`) raise. Usage errors
// exit 2 with their message; anything else exits 1 (server/cli/run-cli.ts).
import { parseArgs } from "node:util";
import { z } from "zod";

export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;
/**
 * One command of a domain's table (`server/<domain>/<domain>.cli.ts`): what it answers is printed as
 * JSON on stdout. `usage` (optional) is its `--help` text: the synopsis line, then any notes.
 */
export type CliCommand = ((args: string[], flags: Flags) => Promise<unknown>) & {
  usage?: string;
  /**
   * The flags to send when a running server runs the command (the embedded database): a command
   * may make a path absolute, or refuse (a UsageError) what cannot cross the socket, such as a stream to stdout.
   */
  forwardedFlags?: (flags: Flags) => Flags;
};

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

/**
 * `--flag value`, `--flag=value`, or a bare `--flag` (true); `-h` is `--help`; everything else (and
 * all after `--`) is positional. Tokenized by Node's own parser (node:util parseArgs: no dependency,
 * maintained with Node); commands take open-ended flags (a channel's credentials are one flag per
 * field of its provider), so options are not declared up front: a value-less `--flag` takes the
 * positional right after it as its value, as the commands' usage lines read.
 */
export function parseCliArgs(argv: string[]): { positionals: string[]; flags: Flags } {
  const { tokens } = parseArgs({ args: argv, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const name = token.name === "h" && token.rawName === "-h" ? "help" : token.name;
    const next = tokens[i + 1];
    if (token.value !== undefined) flags[name] = token.value;
    else if (token.rawName.startsWith("--") && name !== "help" && next?.kind === "positional" && next.index === token.index + 1) {
      flags[name] = next.value;
      i++;
    } else flags[name] = true;
  }
  return { positionals, flags };
}
