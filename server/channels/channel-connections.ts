// A tenant's channel connections: a provider account connected to a channel at an address (the
// number customers reach, or WhatsApp Cloud's phone_number_id). The address resolves the tenant of
// an inbound request, so it belongs to at most one tenant (unique per provider across tenants: a
// second claim is a 409). Credentials are write-only (encrypted, never returned or logged); moving a
// connection to another provider or address needs them again, so stored credentials never follow
// an admin's change. Every change is audited as `channel_connection.changed`, like the CRM's.
import { ZodError } from "zod";
import { Prisma } from "../db/generated/client";
import { modelColumns } from "../db/columns";
import type { TenantDb } from "../db/tenant-scope";
import { getDb, getSql, sqlIfOpen, type Statement } from "../db/client";
import { lockTenantRow } from "../db/lock-row";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { badRequest, conflict, fromZodError, notFound } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { toE164 } from "../lib/customer-identifier";
import { ADDRESS_KIND, PROVIDER_CHANNELS, type ChannelProvider, type ConnectionChannel } from "./providers";
import {
  CREDENTIAL_SCHEMAS,
  channelConnectionResource,
  type ChannelConnectionWire,
  type ConnectChannelInput,
  type ProviderCredentials,
  type UpdateChannelConnectionInput,
} from "./channels.types";

type ConnectionRow = Prisma.ChannelConnectionGetPayload<object>;

export const channelConnectionToWire = channelConnectionResource.toWire;

/** The stored form of an address: E.164 for numbers, the bare digits of a WhatsApp phone_number_id. */
export function normalizeAddress(provider: ChannelProvider, raw: string): string {
  const trimmed = raw.trim();
  if (ADDRESS_KIND[provider] === "phone_number_id") {
    if (!/^\d{1,32}$/.test(trimmed)) {
      throw badRequest(`invalid field 'address': must be the WhatsApp Cloud phone_number_id (digits) for provider '${provider}'`, "address");
    }
    return trimmed;
  }
  const e164 = toE164(trimmed);
  if (!e164) throw badRequest(`invalid field 'address': not a valid phone number; write it in E.164, e.g. +97143001234`, "address");
  return e164;
}

function assertProviderServes(provider: ChannelProvider, channel: ConnectionChannel) {
  if (!PROVIDER_CHANNELS[provider].includes(channel)) {
    throw badRequest(`invalid field 'channel': provider '${provider}' serves ${PROVIDER_CHANNELS[provider].join(", ")}`, "channel");
  }
}

/** Checks the credentials against the provider's own fields and seals them for storage. */
function sealCredentials(provider: ChannelProvider, raw: Record<string, unknown>): string {
  const parsed = CREDENTIAL_SCHEMAS[provider].safeParse(raw);
  if (!parsed.success) {
    throw fromZodError(new ZodError(parsed.error.issues.map((issue) => ({ ...issue, path: ["credentials", ...issue.path] }))));
  }
  return encryptSecret(JSON.stringify(parsed.data));
}

/**
 * Decrypted credentials by their sealed text, so a busy connection is not decrypted on every
 * inbound request. Keyed by the sealed text itself, nothing can go stale, in any process: changing
 * a connection's credentials seals them anew (a fresh random IV, so a new key) and every process
 * misses at once, and a disabled or removed connection is never looked up here (its row is read
 * per request). Bounded: past the limit the oldest entry goes.
 */
const decryptedCredentials = new Map<string, Readonly<Record<string, string>>>();
const MAX_DECRYPTED_CREDENTIALS = 1_000;

/** A connection's credentials (read-only), for the receivers and senders only. */
export function connectionCredentials<P extends ChannelProvider>(row: { provider: P | string; credentialsEncrypted: string }): ProviderCredentials[P] {
  const sealed = row.credentialsEncrypted;
  let credentials = decryptedCredentials.get(sealed);
  if (!credentials) {
    credentials = Object.freeze(JSON.parse(decryptSecret(sealed)) as Record<string, string>);
    if (decryptedCredentials.size >= MAX_DECRYPTED_CREDENTIALS) decryptedCredentials.delete(decryptedCredentials.keys().next().value!);
    decryptedCredentials.set(sealed, credentials);
  }
  return credentials as ProviderCredentials[P];
}

// The same answer whichever tenant holds the address: a refusal must not reveal who does.
const addressTaken = (provider: string, address: string) => conflict(`address '${address}' is already connected with provider '${provider}'`, "address");

const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === "P2002";

/** Without secrets: what the connection is after the change, for the audit entry. */
const auditDetails = (change: string, wire: ChannelConnectionWire, credentialsChanged: boolean) => ({
  change,
  provider: wire.provider,
  channel: wire.channel,
  address: wire.address,
  status: wire.status,
  credentials_changed: credentialsChanged,
});

export async function listChannelConnections(db: TenantDb, input: { limit?: number; cursor?: string }) {
  const page = await keysetPage({
    ...input,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.channelConnection.findFirst({ where: { id }, select: { createdAt: true } }),
    findMany: (args) => db.channelConnection.findMany(args),
  });
  return toListEnvelope(page, channelConnectionToWire);
}

/** Connects a provider account; the address must be free (in every tenant), and credentials are required. */
export async function connectChannel(db: TenantDb, input: ConnectChannelInput, actor: AuditActor): Promise<ChannelConnectionWire> {
  const { tenantId } = db;
  const address = normalizeAddress(input.provider, input.address);
  assertProviderServes(input.provider, input.channel);
  const credentialsEncrypted = sealCredentials(input.provider, input.credentials);
  return db.$transaction(async (tx) => {
    // ON CONFLICT DO NOTHING on (provider, address): of two racing claims one inserts, the other gets the 409.
    const [row] = await tx.channelConnection.createManyAndReturn({
      data: [{ tenantId, provider: input.provider, channel: input.channel, address, status: input.status ?? "active", credentialsEncrypted }],
      skipDuplicates: true,
    });
    if (!row) throw addressTaken(input.provider, address);
    const wire = channelConnectionToWire(row);
    await recordAudit(tx, {
      ...actor,
      action: "channel_connection.changed",
      targetType: "channel_connection",
      targetId: row.id,
      details: auditDetails("created", wire, true),
    });
    return wire;
  });
}

/**
 * Changes a connection. Credentials may be replaced at any time, and are required when the provider
 * or the address changes. A change that changes nothing writes nothing (and no audit entry).
 */
export async function updateChannelConnection(db: TenantDb, input: UpdateChannelConnectionInput, actor: AuditActor): Promise<ChannelConnectionWire> {
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "channel_connections", input.id))) throw notFound();
    const existing = await tx.channelConnection.findFirst({ where: { id: input.id } });
    if (!existing) throw notFound();
    const provider = input.provider ?? (existing.provider as ChannelProvider);
    const channel = input.channel ?? (existing.channel as ConnectionChannel);
    const address = normalizeAddress(provider, input.address ?? existing.address);
    assertProviderServes(provider, channel);
    const moved = provider !== existing.provider || address !== existing.address;
    if (moved && input.credentials === undefined) {
      throw badRequest("missing required field 'credentials': changing the provider or address needs the credentials again", "credentials");
    }
    const data = {
      provider,
      channel,
      address,
      status: input.status ?? existing.status,
      ...(input.credentials !== undefined ? { credentialsEncrypted: sealCredentials(provider, input.credentials) } : {}),
    };
    const unchanged = input.credentials === undefined && (["provider", "channel", "address", "status"] as const).every((k) => data[k] === existing[k]);
    if (unchanged) return channelConnectionToWire(existing);
    let row: ConnectionRow;
    try {
      row = await tx.channelConnection.update({ where: { id: existing.id }, data });
    } catch (err) {
      if (isUniqueViolation(err)) throw addressTaken(provider, address);
      throw err;
    }
    const wire = channelConnectionToWire(row);
    await recordAudit(tx, {
      ...actor,
      action: "channel_connection.changed",
      targetType: "channel_connection",
      targetId: row.id,
      details: auditDetails("updated", wire, input.credentials !== undefined),
    });
    return wire;
  });
}

/** Removes a connection (its address is then free for any tenant). Idempotent: a missing one is `deleted: false`, unaudited. */
export async function disconnectChannel(db: TenantDb, id: string, actor: AuditActor): Promise<{ deleted: boolean }> {
  return db.$transaction(async (tx) => {
    const existing = await tx.channelConnection.findFirst({ where: { id } });
    if (!existing) return { deleted: false };
    await tx.channelConnection.deleteMany({ where: { id } });
    await recordAudit(tx, {
      ...actor,
      action: "channel_connection.changed",
      targetType: "channel_connection",
      targetId: id,
      details: auditDetails("deleted", channelConnectionToWire(existing), false),
    });
    return { deleted: true };
  });
}

export type ResolvedConnection = {
  id: string;
  tenantId: string;
  provider: ChannelProvider;
  channel: ConnectionChannel;
  address: string;
  credentialsEncrypted: string;
};

// A prepared statement on the pipelined connections: every inbound request runs it first. Its
// column names come from the model (server/db/columns.ts).
const CONNECTION = modelColumns(Prisma.ChannelConnectionScalarFieldEnum);
const ACTIVE_CONNECTION: Statement = {
  text: `SELECT ${CONNECTION.id}, ${CONNECTION.tenantId} AS "tenantId", ${CONNECTION.provider}, ${CONNECTION.channel}, ${CONNECTION.address}, ${CONNECTION.status}, ${CONNECTION.credentialsEncrypted} AS "credentialsEncrypted"
    FROM channel_connections WHERE ${CONNECTION.provider} = $1 AND ${CONNECTION.address} = $2`,
};

/**
 * The active connection that owns an address, across tenants: how a receiver finds the tenant of
 * an inbound request. Null when no tenant has it (or its connection is disabled).
 */
export async function findActiveConnection(provider: ChannelProvider, address: string): Promise<ResolvedConnection | null> {
  const sql = sqlIfOpen() ?? (await getSql());
  const [row] = await sql<ResolvedConnection & { status: string }>(ACTIVE_CONNECTION, [provider, address]);
  if (!row || row.status !== "active") return null;
  const { status: _status, ...connection } = row;
  return connection;
}
