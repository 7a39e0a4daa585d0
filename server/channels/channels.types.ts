// Channel connections as the dashboard and the CLI see them: inputs and the wire shape. Credentials
// are write-only: an input may carry them, no output ever does (only `has_credentials`).
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { invalid, uuid } from "../lib/wire";
import { pageQuery, listEnvelope } from "../lib/list-envelope";
import { unknownFieldMessage } from "../lib/strict-body";
import { CHANNEL_PROVIDERS, CONNECTION_CHANNELS, CONNECTION_STATUSES, type ChannelProvider } from "./providers";

const secret = (max = 256) => z.string().trim().min(1, { message: "must not be blank" }).max(max);

/** Each provider's credentials, strict: a misspelt field is a 400 naming it, not a silently missing secret. */
export const CREDENTIAL_SCHEMAS = {
  twilio: z.strictObject(
    {
      account_sid: z
        .string()
        .trim()
        .regex(/^AC[0-9a-fA-F]{32}$/, { message: "must be 'AC' followed by 32 hex characters" }),
      auth_token: secret(),
    },
    unknownFieldMessage(),
  ),
  whatsapp_cloud: z.strictObject({ app_secret: secret(), verify_token: secret(), access_token: secret(4096) }, unknownFieldMessage()),
  retell: z.strictObject({ api_key: secret() }, unknownFieldMessage()),
  vapi: z.strictObject({ secret: secret() }, unknownFieldMessage()),
} satisfies Record<ChannelProvider, z.ZodType>;

export type ProviderCredentials = { [P in ChannelProvider]: z.infer<(typeof CREDENTIAL_SCHEMAS)[P]> };

const provider = z.enum(CHANNEL_PROVIDERS, invalid(`must be one of ${CHANNEL_PROVIDERS.join(", ")}`));
const channel = z.enum(CONNECTION_CHANNELS, invalid(`must be one of ${CONNECTION_CHANNELS.join(", ")}`));
const status = z.enum(CONNECTION_STATUSES, invalid(`must be one of ${CONNECTION_STATUSES.join(", ")}`));
const address = z.string().max(64).describe("The business side customers reach: an E.164 number, or the WhatsApp Cloud phone_number_id");
// Checked against the provider's own schema by the service, once the provider is known (an update may keep the stored one).
const credentials = z.record(z.string(), z.unknown()).describe("Write-only; never returned");

export const connectChannelInput = z.strictObject(
  {
    provider,
    channel,
    address,
    status: status.optional().describe("Default `active`; a `disabled` connection receives nothing"),
    credentials,
  },
  unknownFieldMessage(),
);

export const updateChannelConnectionInput = z.strictObject(
  {
    id: uuid().describe("Connection id"),
    provider: provider.optional(),
    channel: channel.optional(),
    address: address.optional(),
    status: status.optional(),
    credentials: credentials.optional().describe("Write-only; required when the provider or address changes"),
  },
  unknownFieldMessage(),
);

/** An operator's move of an address to another tenant (`channel move`). */
export const moveChannelAddressInput = z.strictObject(
  {
    provider,
    address,
    to_tenant: uuid().describe("The tenant the address moves to"),
    channel: channel.optional().describe("Default: the channel of the connection that holds it now"),
    credentials: credentials.optional().describe("The new owner's; without them the moved connection is `disabled` until its owner enters them"),
    reason: z
      .string()
      .trim()
      .min(1, { message: "must not be blank" })
      .max(500)
      .describe("Why, for both tenants' audit logs (e.g. the ticket and the proof seen)"),
  },
  unknownFieldMessage(),
);

export const connectionIdInput = z.strictObject({ id: uuid().describe("Connection id") }, unknownFieldMessage());
export const listChannelConnectionsInput = z.object(pageQuery);

const column = resourceFields<Prisma.ChannelConnectionGetPayload<object>>();
/** A channel connection on the wire: its credentials never are, only whether it has them. */
export const channelConnectionResource = column.define("ChannelConnection", {
  id: column.value("id", z.uuid()),
  provider: column.value("provider", provider),
  channel: column.value("channel", channel),
  address: column.value("address", z.string()),
  status: column.value("status", status),
  has_credentials: column.computed(z.boolean(), (row) => row.credentialsEncrypted.length > 0),
  created_at: column.timestamp("createdAt", z.string()),
  updated_at: column.timestamp("updatedAt", z.string()),
});
export const channelConnectionSchema = channelConnectionResource.schema;

export const channelConnectionListSchema = listEnvelope(channelConnectionSchema, "ChannelConnectionList");

export type ConnectChannelInput = z.infer<typeof connectChannelInput>;
export type UpdateChannelConnectionInput = z.infer<typeof updateChannelConnectionInput>;
export type MoveChannelAddressInput = z.infer<typeof moveChannelAddressInput>;
export type ChannelConnectionWire = z.infer<typeof channelConnectionSchema>;
