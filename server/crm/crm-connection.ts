// The tenant's CRM connection (one per tenant): provider, base URL, encrypted credentials and the
// canonical -> CRM field mapping. Managed from the dashboard and the operator CLI; every change is
// audited as `crm_connection.changed`, and nothing here ever returns or logs the credentials.
import { checkUrlShape, refusedLiteralHostReason } from "../lib/target-url";
import type { TenantDb } from "../db/tenant-scope";
import { badRequest, notFound } from "../lib/errors";
import { recordAudit, type AuditActor } from "../audit/record-audit";
import { encryptSecret } from "../crypto/secret-box";
import { type CrmConnectionWire, crmConnectionResource, type SetCrmConnectionInput } from "./crm.types";

export const mappingOf = (row: { fieldMapping: unknown }): Record<string, string> =>
  row.fieldMapping && typeof row.fieldMapping === "object" ? (row.fieldMapping as Record<string, string>) : {};

const crmConnectionToWire = crmConnectionResource.toWire;

/** Two canonical keys writing one CRM key would make a record's content depend on key order. */
function assertMappingInjective(mapping: Record<string, string>) {
  const seen = new Map<string, string>();
  for (const [canonical, crmKey] of Object.entries(mapping)) {
    const other = seen.get(crmKey);
    if (other !== undefined) {
      throw badRequest(`invalid field 'field_mapping.${canonical}': CRM key '${crmKey}' is already mapped from '${other}'`, `field_mapping.${canonical}`);
    }
    seen.set(crmKey, canonical);
  }
}

/** Without secrets: what changed, for the audit entry. */
const auditDetails = (change: string, wire: CrmConnectionWire | null, credentialsChanged: boolean) => ({
  change,
  provider: wire?.provider ?? null,
  base_url: wire?.base_url ?? null,
  mapped_keys: wire ? Object.keys(wire.field_mapping) : [],
  credentials_changed: credentialsChanged,
});

export async function getCrmConnection(db: TenantDb): Promise<CrmConnectionWire | null> {
  const row = await db.crmConnection.findFirst();
  return row ? crmConnectionToWire(row) : null;
}

/**
 * The URL is tenant-set and called by this server with the tenant's token: https only (the webhook
 * targets' rule, with the same development allowance for http on loopback), and an address inside
 * our network is refused here; every call resolves the host and checks it again (DNS can change).
 */
export function assertAllowedBaseUrl(raw: string) {
  const refused = refusedLiteralHostReason(new URL(raw).hostname);
  if (refused) throw badRequest(`invalid field 'base_url': ${refused}, inside this service's network`, "base_url");
  const shape = checkUrlShape(raw);
  if ("reason" in shape) throw badRequest(`invalid field 'base_url': ${shape.reason}`, "base_url");
}

const sameUrl = (a: string, b: string) => new URL(a).href === new URL(b).href;

/**
 * The stored token was given for one provider at one address: a change of either needs the token
 * again, so an admin cannot send the stored credentials to a server of their choosing.
 */
function noTokenForNew(): never {
  throw badRequest("missing required field 'token': a new CRM connection needs credentials", "token");
}

export function assertCredentialsFor(existing: { provider: string; baseUrl: string } | null, input: SetCrmConnectionInput) {
  if (input.token) return;
  if (!existing) noTokenForNew();
  if (existing.provider !== input.provider || !sameUrl(existing.baseUrl, input.base_url)) {
    throw badRequest("missing required field 'token': changing the provider or base_url needs the credentials again", "token");
  }
}

/** Creates or replaces the connection. The token is required the first time and when the provider or base URL changes. */
export async function setCrmConnection(db: TenantDb, input: SetCrmConnectionInput, actor: AuditActor): Promise<CrmConnectionWire> {
  if (input.field_mapping) assertMappingInjective(input.field_mapping);
  assertAllowedBaseUrl(input.base_url);
  return db.$transaction(async (tx) => {
    const existing = await tx.crmConnection.findFirst();
    assertCredentialsFor(existing, input);
    const credentialsEncrypted = input.token ? encryptSecret(JSON.stringify({ token: input.token })) : undefined;
    const data = {
      provider: input.provider,
      baseUrl: input.base_url,
      ...(credentialsEncrypted ? { credentialsEncrypted } : {}),
      ...(input.field_mapping ? { fieldMapping: input.field_mapping } : {}),
    };
    const row = existing
      ? await tx.crmConnection.update({ where: { id: existing.id }, data })
      : await tx.crmConnection.create({
          data: { tenantId: tx.tenantId, fieldMapping: {}, ...data, credentialsEncrypted: credentialsEncrypted ?? noTokenForNew() },
        });
    const wire = crmConnectionToWire(row);
    await recordAudit(tx, {
      ...actor,
      action: "crm_connection.changed",
      targetType: "crm_connection",
      targetId: row.id,
      details: auditDetails(existing ? "updated" : "created", wire, Boolean(input.token)),
    });
    return wire;
  });
}

export async function updateCrmMapping(db: TenantDb, mapping: Record<string, string>, actor: AuditActor): Promise<CrmConnectionWire> {
  assertMappingInjective(mapping);
  return db.$transaction(async (tx) => {
    const existing = await tx.crmConnection.findFirst({ select: { id: true } });
    if (!existing) throw notFound();
    const wire = crmConnectionToWire(await tx.crmConnection.update({ where: { id: existing.id }, data: { fieldMapping: mapping } }));
    await recordAudit(tx, {
      ...actor,
      action: "crm_connection.changed",
      targetType: "crm_connection",
      targetId: existing.id,
      details: auditDetails("mapping_updated", wire, false),
    });
    return wire;
  });
}

/** Idempotent: deleting when there is no connection changes nothing and writes no audit entry. */
export async function deleteCrmConnection(db: TenantDb, actor: AuditActor): Promise<{ deleted: boolean }> {
  return db.$transaction(async (tx) => {
    const existing = await tx.crmConnection.findFirst({ select: { id: true } });
    if (!existing) return { deleted: false };
    await tx.crmConnection.deleteMany({ where: { id: existing.id } });
    await recordAudit(tx, {
      ...actor,
      action: "crm_connection.changed",
      targetType: "crm_connection",
      targetId: existing.id,
      details: auditDetails("deleted", null, true),
    });
    return { deleted: true };
  });
}
