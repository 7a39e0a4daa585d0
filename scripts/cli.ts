// Operator CLI: bootstrap tenants and keys, and drive tests. Every command prints JSON on stdout.
//   npm run cli -- --help                      (every command)
//   npm run cli -- key create --help           (one command)
//   npm run cli -- tenant create --name N
//   npm run cli -- key create --tenant ID --name N --scopes read,offerings:write
// Exit codes: 0 done, 1 failed, 2 wrong usage; errors are plain lines on stderr, and so are log lines.
import { setLogDestination } from "../server/lib/log";

// stdout is the command's JSON (or an export's lines): log lines go to stderr, set before anything can log.
setLogDestination(2);
const { parseCliArgs, runCli } = await import("../server/cli/run-cli");

const { positionals, flags } = parseCliArgs(process.argv.slice(2));
process.exit(await runCli(positionals, flags));
