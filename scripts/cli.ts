// Operator CLI: bootstrap tenants and keys, and drive tests. Every command prints JSON on stdout.
//   npm run cli -- --help                      (every command)
//   npm run cli -- key create --help           (one command)
//   npm run cli -- tenant create --name N
//   npm run cli -- key create --tenant ID --name N --scopes read,offerings:write
// Exit codes: 0 done, 1 failed, 2 wrong usage; errors are plain lines on stderr.
import { parseCliArgs, runCli } from "../server/cli/run-cli";

const { positionals, flags } = parseCliArgs(process.argv.slice(2));
process.exit(await runCli(positionals, flags));
