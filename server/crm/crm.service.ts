// POST /crm/create-record: translate canonical keys through the tenant's mapping, then hand the
// record to the provider's driver. An upstream failure is a 500 naming the provider; its detail
// goes to the log, never with the credentials.
import type { TenantDb } from "../db/tenant-scope";
import { AppError, badRequest, conflict } from "../lib/errors";
import { log } from "../lib/log";
import { decryptSecret } from "../crypto/secret-box";
import { CRM_DRIVERS, CrmUpstreamError, type CrmFieldValue, type CrmProvider } from "./drivers";
import { mappingOf } from "./crm-connection";
import { IDEMPOTENCY_CANONICAL_KEY, type CreateRecordInput, type CrmRecord } from "./crm.types";
import { setting } from "../lib/settings";
import { traceClientCall } from "../observability/tracing";

/** Upstream timeout (CRM_TIMEOUT_MS; tests use a short one). */
export const crmTimeoutMs = () => setting("CRM_TIMEOUT_MS");

export async function createCrmRecord(db: TenantDb, input: CreateRecordInput, context: { tenantId: string }): Promise<CrmRecord> {
  const connection = await db.crmConnection.findFirst();
  if (!connection) throw conflict("no CRM connection is configured for this tenant; set one up in the dashboard");
  const provider = connection.provider as CrmProvider;
  const mapping = mappingOf(connection);

  const properties: Record<string, CrmFieldValue> = {};
  for (const [canonical, value] of Object.entries(input.fields)) {
    const crmKey = Object.hasOwn(mapping, canonical) ? mapping[canonical] : undefined;
    if (!crmKey) throw badRequest(`invalid field 'fields.${canonical}': no CRM mapping for canonical key '${canonical}'`, `fields.${canonical}`);
    properties[crmKey] = value;
  }
  const idempotencyProperty = provider === "hubspot" ? mapping[IDEMPOTENCY_CANONICAL_KEY] : undefined;
  if (provider === "hubspot" && input.idempotency_key && !idempotencyProperty) {
    throw badRequest(
      `invalid field 'idempotency_key': no CRM mapping for canonical key '${IDEMPOTENCY_CANONICAL_KEY}' (HubSpot dedupes by a unique property; map '${IDEMPOTENCY_CANONICAL_KEY}' to it)`,
      "idempotency_key",
    );
  }

  const failed = (detail: Record<string, unknown>) => {
    log.error({ tenant_id: context.tenantId, provider, object: input.object, ...detail }, "crm provider failed");
    return new AppError("internal_error", `CRM provider '${provider}' failed`);
  };
  let token: string;
  try {
    token = (JSON.parse(decryptSecret(connection.credentialsEncrypted)) as { token: string }).token;
  } catch (err) {
    throw failed({ reason: "stored credentials unreadable", error: err });
  }

  try {
    // With tracing on, the call is a CLIENT span of the request (observability/tracing.ts).
    const { recordId } = await traceClientCall(
      "crm create_record",
      { "crm.provider": provider, "crm.object": input.object, "http.request.method": "POST" },
      () =>
        CRM_DRIVERS[provider]({
          baseUrl: connection.baseUrl,
          token,
          object: input.object,
          properties,
          idempotencyKey: input.idempotency_key,
          idempotencyProperty,
          timeoutMs: crmTimeoutMs(),
        }),
    );
    return { provider, object: input.object, crm_record_id: recordId, fields: properties };
  } catch (err) {
    if (err instanceof CrmUpstreamError) throw failed(err.detail);
    throw failed({ reason: "driver error", error: err });
  }
}
