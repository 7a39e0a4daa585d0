// A tenant's channel connections: a provider account connected to a channel at an address (the
// number customers reach, or WhatsApp Cloud's phone_number_id). The address resolves the tenant of
// an inbound request, so it belongs to at most one tenant (unique per provider across tenants: a
// second claim is a 409, and the holder is told of a claim from another tenant; an operator can
// move the address, see docs/channels.md). Credentials are write-only (encrypted, never returned or
// logged); moving a connection to another provider or address needs them again, so stored
// credentials never follow an admin's change, nor an address an operator moves. Every change is
// audited as `channel_connection.changed`, like the CRM's.
import { ZodError } from "zod";
import { Prisma } from "../db/generated/client";
import { modelColumns, TABLE } from "../db/columns";
import { scopeToTenant, type TenantDb, type TenantTx } from "../db/tenant-scope";
import { getDb, getSql, sqlIfOpen, type Statement } from "../db/client";
import { lockTenantRow } from "../db/lock-row";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { AppError, badRequest, conflict, fromZodError, notFound } from "../lib/errors";
import { log } from "../lib/log";
import { OPERATOR, recordAudit, type AuditActor } from "../audit/record-audit";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { toE164 } from "../lib/customer-identifier";
import { ADDRESS_KIND, PROVIDER_CHANNELS, type ChannelProvider, type ConnectionChannel } from "./providers";
import {
  CREDENTIAL_SCHEMAS,
  channelConnectionResource,
  type ChannelConnectionWire,
  type ConnectChannelInput,
  type MoveChannelAddressInput,
  type ProviderCredentials,
  type UpdateChannelConnectionInput,
} from "./channels.types";

type ConnectionRow = Prisma.ChannelConnectionGetPayload<object>;

const channelConnectionToWire = channelConnectionResource.toWire;

/** The stored form of an address: E.164 for numbers, the bare digits of a WhatsApp phone_number_id. */
function normalizeAddress(provider: ChannelProvider, raw: string): string {
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
 * misses at once, and a disabled or removed connection stores nothing (every store checks the
 * connection's row, `connectionIsCurrentSql`). Bounded: past the limit the oldest entry goes.
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
const isAddressTaken = (err: unknown) => err instanceof AppError && err.errorCode === "conflict" && err.field === "address";

/** The holder's audit action for a claim another tenant made on its address, and the claimant's for its refusal. */
const CLAIMED_BY_ANOTHER_TENANT = "channel_connection.claimed_by_another_tenant";
const CLAIM_REFUSED = "channel_connection.claim_refused";
/** A holder is told of claims on one connection at most this often (a claimant cannot flood its log). */
const CLAIM_NOTICE_EVERY_MS = 3_600_000;
/** The surface a claim came through, as its holder learns it (never who made it). */
const CLAIMED_THROUGH: Record<string, string> = { user: "dashboard", api_key: "api", operator: "operator" };

type Claim = { provider: string; channel: string; address: string };

/**
 * A claim on an address that another tenant holds was refused (the 409). The holder's audit log
 * gets `channel_connection.claimed_by_another_tenant` (address, provider, channel asked for, and the
 * surface: never the tenant, user or key that tried), at most once an hour per connection; the
 * claimant's gets `channel_connection.claim_refused` (never the holder). An address the claimant's
 * own tenant holds tells no one. Written after the refused transaction; a failure here is logged and
 * the 409 stands.
 */
async function recordRefusedClaim(claimantTenantId: string, claim: Claim, actor: AuditActor): Promise<void> {
  try {
    const db = await getDb();
    const holder = await db.channelConnection.findFirst({ where: { provider: claim.provider, address: claim.address }, select: { id: true, tenantId: true } });
    if (!holder || holder.tenantId === claimantTenantId) return;
    const holderDb = scopeToTenant(db, holder.tenantId);
    const since = new Date(Date.now() - CLAIM_NOTICE_EVERY_MS);
    const told = await holderDb.auditLog.findFirst({
      where: { action: CLAIMED_BY_ANOTHER_TENANT, targetId: holder.id, createdAt: { gte: since } },
      select: { id: true },
    });
    if (!told) {
      await recordAudit(holderDb, {
        actorType: "another_tenant",
        actorId: null,
        actorLabel: null,
        action: CLAIMED_BY_ANOTHER_TENANT,
        targetType: "channel_connection",
        targetId: holder.id,
        details: { ...claim, through: CLAIMED_THROUGH[actor.actorType] ?? actor.actorType },
      });
    }
    await recordAudit(scopeToTenant(db, claimantTenantId), {
      ...actor,
      action: CLAIM_REFUSED,
      targetType: "channel_connection",
      targetId: null,
      details: { ...claim, held_by: "another tenant" },
    });
  } catch (err) {
    log.warn({ provider: claim.provider, error: err }, "could not record a refused claim on a channel address");
  }
}

/** `work`; when it is refused because another tenant holds the address, that claim is recorded first. */
async function notingRefusedClaim<T>(tenantId: string, claim: () => Claim, actor: AuditActor, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isAddressTaken(err)) await recordRefusedClaim(tenantId, claim(), actor);
    throw err;
  }
}

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
  const claim = () => ({ provider: input.provider, channel: input.channel, address });
  return notingRefusedClaim(tenantId, claim, actor, () => insertConnection(db, input, address, credentialsEncrypted, actor));
}

async function insertConnection(db: TenantDb, input: ConnectChannelInput, address: string, credentialsEncrypted: string, actor: AuditActor) {
  const { tenantId } = db;
  return db.$transaction(async (tx) => {
    // ON CONFLICT DO NOTHING on (provider, address): of two racing claims one inserts, the other gets the 409.
    const [row] = await tx.channelConnection.createManyAndReturn({
      data: [{ tenantId, provider: input.provider, channel: input.channel, address, status: input.status ?? "active", credentialsEncrypted }],
      skipDuplicates: true,
    });
    // Taken, perhaps by this tenant's own connection that an operator moved here without
    // credentials: connecting the address completes it (the tenant scope finds no other tenant's).
    const [completed] = row
      ? []
      : await tx.channelConnection.updateManyAndReturn({
          where: { provider: input.provider, address, credentialsEncrypted: "" },
          data: { channel: input.channel, status: input.status ?? "active", credentialsEncrypted },
        });
    const connection = row ?? completed;
    if (!connection) throw addressTaken(input.provider, address);
    const wire = channelConnectionToWire(connection);
    await recordAudit(tx, {
      ...actor,
      action: "channel_connection.changed",
      targetType: "channel_connection",
      targetId: connection.id,
      details: auditDetails(row ? "created" : "updated", wire, true),
    });
    return wire;
  });
}

/**
 * Changes a connection. Credentials may be replaced at any time, and are required when the provider
 * or the address changes, and to make active a connection that has none (one an operator moved
 * here without them). A change that changes nothing writes nothing (and no audit entry).
 */
export async function updateChannelConnection(db: TenantDb, input: UpdateChannelConnectionInput, actor: AuditActor): Promise<ChannelConnectionWire> {
  let claim: Claim | undefined;
  return notingRefusedClaim(
    db.tenantId,
    () => claim!,
    actor,
    () => updateConnection(db, input, actor, (c) => (claim = c)),
  );
}

async function updateConnection(db: TenantDb, input: UpdateChannelConnectionInput, actor: AuditActor, claiming: (claim: Claim) => void) {
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "ChannelConnection", input.id))) throw notFound();
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
    if ((input.status ?? existing.status) === "active" && input.credentials === undefined && existing.credentialsEncrypted === "") {
      throw badRequest("missing required field 'credentials': this connection has none yet, and an active one needs them", "credentials");
    }
    claiming({ provider, channel, address });
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

/**
 * An operator gives an address to another tenant (after that tenant proved it is theirs, see
 * docs/channels.md): the holder's connection is removed and one is made in `toTenantId` at the same
 * provider and address, in one transaction, audited in both tenants (`moved_away`, `moved_here`,
 * with the operator's reason; neither entry names the other tenant). The holder's credentials stay
 * behind: the new connection has the credentials given here, or none and is `disabled` until the
 * new owner enters theirs.
 */
export async function moveChannelAddress(
  input: MoveChannelAddressInput,
  actor: AuditActor = OPERATOR,
): Promise<{ from_tenant: string; connection: ChannelConnectionWire }> {
  const address = normalizeAddress(input.provider, input.address);
  const credentialsEncrypted = input.credentials ? sealCredentials(input.provider, input.credentials) : "";
  const db = await getDb();
  return db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRawUnsafe<{ id: string }[]>(LOCK_HELD_ADDRESS, input.provider, address);
    const held = locked && (await tx.channelConnection.findUniqueOrThrow({ where: { id: locked.id } }));
    if (!held) throw new AppError("not_found", `no tenant holds address '${address}' with provider '${input.provider}'`);
    if (held.tenantId === input.to_tenant)
      throw conflict(`address '${address}' with provider '${input.provider}' is already held by tenant ${input.to_tenant}`, "to_tenant");
    const channel = input.channel ?? (held.channel as ConnectionChannel);
    assertProviderServes(input.provider, channel);
    await tx.channelConnection.delete({ where: { id: held.id } });
    const row = await tx.channelConnection.create({
      data: {
        tenantId: input.to_tenant,
        provider: input.provider,
        channel,
        address,
        status: credentialsEncrypted ? "active" : "disabled",
        credentialsEncrypted,
      },
    });
    const wire = channelConnectionToWire(row);
    const entry = { ...actor, action: "channel_connection.changed", targetType: "channel_connection" };
    await tx.auditLog.createMany({
      data: [
        {
          ...entry,
          tenantId: held.tenantId,
          targetId: held.id,
          details: { ...auditDetails("moved_away", channelConnectionToWire(held), false), reason: input.reason },
        },
        {
          ...entry,
          tenantId: input.to_tenant,
          targetId: row.id,
          details: { ...auditDetails("moved_here", wire, credentialsEncrypted !== ""), reason: input.reason },
        },
      ],
    });
    return { from_tenant: held.tenantId, connection: wire };
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
    FROM ${TABLE.ChannelConnection} WHERE ${CONNECTION.provider} = $1 AND ${CONNECTION.address} = $2`,
};

/** Locks the connection that holds an address, in whichever tenant ($1 provider, $2 address). */
const LOCK_HELD_ADDRESS = `SELECT ${CONNECTION.id} FROM ${TABLE.ChannelConnection} WHERE ${CONNECTION.provider} = $1 AND ${CONNECTION.address} = $2 FOR UPDATE`;

/**
 * Connections found active, per process, by provider and address: a receiver verifies the
 * signature with the cached credentials and its store checks, in the same round trip or transaction
 * as its writes, that the connection is still active with those credentials
 * (`connectionIsCurrentSql`; server/receivers/connection-gate.ts); when it is not, nothing was
 * stored, the entry goes and the connection is looked up again. Only found connections are kept ("not found" is asked again every
 * time, so a connection made in another process answers at once). Bounded: past the limit the
 * oldest entry goes.
 */
const activeConnections = new Map<string, ResolvedConnection>();
const MAX_CACHED_CONNECTIONS = 10_000;
const cacheKey = (provider: string, address: string) => `${provider} ${address}`;

/** The connection last found active for the address in this process, unchecked: for paths whose store checks it (see above). */
export function cachedActiveConnection(provider: ChannelProvider, address: string): ResolvedConnection | null {
  return activeConnections.get(cacheKey(provider, address)) ?? null;
}

/** Forgets the cached connection of an address (it changed, or its credentials did not verify a request). */
export function forgetCachedConnection(provider: ChannelProvider, address: string): void {
  activeConnections.delete(cacheKey(provider, address));
}

/**
 * The active connection that owns an address, across tenants, read now: how a receiver finds the
 * tenant of an inbound request. Null when no tenant has it (or its connection is disabled). A
 * connection found is remembered for `cachedActiveConnection`.
 */
export async function findActiveConnection(provider: ChannelProvider, address: string): Promise<ResolvedConnection | null> {
  const sql = sqlIfOpen() ?? (await getSql());
  const [row] = await sql<ResolvedConnection & { status: string }>(ACTIVE_CONNECTION, [provider, address]);
  const key = cacheKey(provider, address);
  if (!row || row.status !== "active") {
    activeConnections.delete(key);
    return null;
  }
  const { status: _status, ...connection } = row;
  activeConnections.delete(key);
  if (activeConnections.size >= MAX_CACHED_CONNECTIONS) activeConnections.delete(activeConnections.keys().next().value!);
  activeConnections.set(key, connection);
  return connection;
}

/** The connection changed (disabled, removed, credentials replaced) since a receiver read it: nothing was stored. */
export class StaleConnectionError extends Error {
  constructor() {
    super("the channel connection changed since it was read");
  }
}

/** The connection a receiver verified a request with: a store checks that it is still active with these credentials. */
export type ConnectionCheck = { id: string; credentialsEncrypted: string };

/**
 * THE condition every receiver's store checks, in its own statement or transaction (SQL of the
 * connection id, the tenant and the sealed credentials): true while that connection is active with
 * exactly those credentials. Whoever disables, removes or re-keys it makes it false for every
 * process at once, whatever they have cached.
 */
export function connectionIsCurrentSql(p: { id: string; tenant: string; sealed: string }): string {
  return `EXISTS (SELECT 1 FROM ${TABLE.ChannelConnection} k WHERE k.${CONNECTION.id} = ${p.id} AND k.${CONNECTION.tenantId} = ${p.tenant}
    AND k.${CONNECTION.status} = 'active' AND k.${CONNECTION.credentialsEncrypted} = ${p.sealed})`;
}

const CONNECTION_IS_CURRENT = `SELECT ${connectionIsCurrentSql({ id: "$1::uuid", tenant: "$2::uuid", sealed: "$3::text" })} AS ok`;

/**
 * For a store made of several statements (a call's report, a delivery report): its transaction's
 * first statement, so nothing it writes commits unless the connection is current; else
 * `StaleConnectionError` (the transaction rolls back, and the receiver reads the connection again).
 * Null: an in-process caller that verified nothing.
 */
export async function assertConnectionCurrentIn(tx: TenantTx, connection: ConnectionCheck | null): Promise<void> {
  if (!connection) return;
  const [row] = await tx.$queryRawUnsafe<{ ok: boolean }[]>(CONNECTION_IS_CURRENT, connection.id, tx.tenantId, connection.credentialsEncrypted);
  if (!row?.ok) throw new StaleConnectionError();
}
