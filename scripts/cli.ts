// Operator CLI: bootstrap tenants and keys, and drive tests. Every command prints JSON on stdout.
//   npm run cli -- tenant create --name N
//   npm run cli -- key create --tenant ID --name N --scopes read,offerings:write
//   npm run cli -- key revoke KEY_ID
//   npm run cli -- key list --tenant ID
import { parseCliArgs, runCli } from "../server/cli/run-cli";

const { positionals, flags } = parseCliArgs(process.argv.slice(2));
process.exit(await runCli(positionals, flags));
