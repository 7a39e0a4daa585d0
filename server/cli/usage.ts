// The `--help` text of the commands in the domains' tables (server/<domain>/<domain>.cli.ts), by
// "<group> <action>": the synopsis line, then notes. A command may instead carry its own `usage`
// field (server/lib/cli.ts's CliCommand), which wins; a command with neither still runs and its help
// says so.
import { SCOPES } from "../auth/principal";

export const COMMAND_USAGE: Record<string, string> = {
  "tenant create": "tenant create --name NAME\n  Creates a tenant (a name of 1 to 100 characters); prints its id, name and slug.",
  "tenant list": "tenant list\n  Every tenant with its status (active, suspended, deleting) and usage: rows per table, active API keys, webhook endpoints.",
  "tenant suspend":
    "tenant suspend TENANT_ID [--reason TEXT]\n  Refuses the tenant's API keys, agent tools and dashboard (403) and holds its webhook deliveries; what providers send is still stored.",
  "tenant resume": "tenant resume TENANT_ID\n  Lifts a suspension (held deliveries go out in order), or cancels a deletion still in its grace period.",
  "tenant delete":
    "tenant delete TENANT_ID [--now]\n  Suspends the tenant and deletes every row of it after TENANT_DELETE_GRACE_HOURS; --now deletes at once, in batches (run again to continue after an interruption).",
  "tenant retention":
    "tenant retention TENANT_ID [--messages-days N|default] [--call-recordings-days N|default] [--events-days N|default] [--audit-log-days N|default] [--notifications-days N|default]\n  Shows, or sets, how long the tenant keeps each kind of data: at most the operator's RETENTION_*_DAYS bound.",
  "retention purge":
    "retention purge [--tenant TENANT_ID]\n  Runs the retention purge once (every tenant, or one), in batches; each server process also runs it on RETENTION_PURGE_INTERVAL_MS.",
  "customer erase":
    "customer erase --tenant TENANT_ID (--identifier PHONE_OR_EMAIL | --conversation CONVERSATION_ID)\n  Erases one customer's personal data everywhere (docs/data-rights.md); emits customer.erased. Running it again changes nothing.",
  "key create": `key create --tenant TENANT_ID --name NAME --scopes SCOPE[,SCOPE…]\n  Issues an API key; prints it once (it is stored only as a hash).\n  Scopes: ${SCOPES.join(", ")}.`,
  "key list": "key list --tenant TENANT_ID\n  The tenant's keys (prefix and last 4 characters, never the key).",
  "key revoke": "key revoke KEY_ID\n  Revokes a key; the next request with it is a 401. Revoking again changes nothing.",
  "user create": "user create --email EMAIL --password PASSWORD [--name NAME]\n  Creates a dashboard user (no tenant yet: see member add).",
  "member add": "member add --tenant TENANT_ID --user-email EMAIL --role owner|admin|member\n  Makes an existing user a member of a tenant.",
  "webhook create":
    "webhook create --tenant TENANT_ID --url URL --events TYPE[,TYPE…] [--description TEXT] [--enabled true|false] [--max-per-second N]\n  Registers a webhook endpoint; prints its signing secret once.\n  The URL must be https and public; loopback targets need WEBHOOK_ALLOW_LOOPBACK=1 (local testing).",
  "webhook update": "webhook update ENDPOINT_ID [--url URL] [--events TYPE[,TYPE…]] [--description TEXT] [--enabled true|false] [--max-per-second N]",
  "webhook list": "webhook list --tenant TENANT_ID",
  "webhook delete": "webhook delete ENDPOINT_ID\n  Deletes the endpoint and its deliveries (pending ones are dropped and counted).",
  "webhook roll-secret":
    "webhook roll-secret ENDPOINT_ID [--overlap-seconds N]\n  Prints a new signing secret once; the old one signs beside it for N seconds (default 24 hours).",
  "delivery list": "delivery list --tenant TENANT_ID [--subscription ENDPOINT_ID]",
  "delivery replay": "delivery replay DELIVERY_ID\n  Sends the delivery again: a new cycle of the retry ladder, due now.",
  "crm set":
    "crm set --tenant TENANT_ID --provider http|hubspot --base-url URL [--token TOKEN] [--mapping name=firstname,phone=phone]\n  --token is required for a new connection and whenever the provider or base URL changes. Output never shows the token.",
  "crm show": "crm show --tenant TENANT_ID",
  "crm delete": "crm delete --tenant TENANT_ID",
  "channel connect":
    "channel connect --tenant TENANT_ID --provider PROVIDER --channel CHANNEL --address ADDRESS [credential flags]\n" +
    "channel connect --tenant TENANT_ID --id CONNECTION_ID [--status enabled|disabled] [--address ADDRESS] [credential flags]\n" +
    "  Credentials are one flag per field, kebab-case (e.g. --account-sid AC… --auth-token …); required again when the provider or address changes.",
  "channel list": "channel list --tenant TENANT_ID",
  "channel disconnect": "channel disconnect --tenant TENANT_ID CONNECTION_ID",
  "channel move":
    "channel move --provider PROVIDER --address ADDRESS --to-tenant TENANT_ID --reason TEXT [--channel CHANNEL] [credential flags]\n  Gives an address another tenant holds to this one; without credentials the moved connection stays disabled until its new owner enters them.",
};
