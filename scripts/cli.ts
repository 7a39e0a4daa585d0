// Operator CLI: bootstrap tenants and keys, and drive tests. Every command prints JSON on stdout.
//   npm run cli -- tenant create --name N
//   npm run cli -- key create --tenant ID --name N --scopes read,offerings:write
//   npm run cli -- key revoke KEY_ID
//   npm run cli -- key list --tenant ID
import { parseArgs } from "node:util";
import { runCli } from "../server/cli/run-cli";

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  strict: false,
});
const code = await runCli(positionals, values as Record<string, string | boolean | undefined>);
process.exit(code);
