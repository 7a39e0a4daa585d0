// HubSpot CRM v3 objects API with a private-app token (Bearer).
//
// HubSpot has no Idempotency-Key header. What it offers instead is an upsert keyed by a property
// whose values are unique (`hasUniqueValue`): POST /crm/v3/objects/{object}/batch/upsert with
// `{ inputs: [{ idProperty, id: <key>, properties }] }` creates the record the first time and finds
// the same record on a retry. So with an idempotency key the driver upserts by the property the
// tenant mapped for the canonical key `idempotency_key`; without one it is a plain create
// (POST /crm/v3/objects/{object} with `{ properties }`).
import { CrmUpstreamError, joinUrl, postJson, recordIdOf, type CrmDriver } from "./driver";

export const hubspotDriver: CrmDriver = async (req) => {
  const opts = { token: req.token, timeoutMs: req.timeoutMs };
  if (req.idempotencyKey && req.idempotencyProperty) {
    const answer = await postJson(
      `${joinUrl(req.baseUrl, "crm", "v3", "objects", req.object, "batch", "upsert")}`,
      {
        inputs: [
          {
            idProperty: req.idempotencyProperty,
            id: req.idempotencyKey,
            properties: { ...req.properties, [req.idempotencyProperty]: req.idempotencyKey },
          },
        ],
      },
      opts,
    );
    const results = (answer as { results?: { id?: unknown }[] } | null)?.results;
    const recordId = Array.isArray(results) && results.length === 1 ? recordIdOf(results[0]?.id) : null;
    if (!recordId) throw new CrmUpstreamError({ reason: "upsert answer has no single result id" });
    return { recordId };
  }
  const answer = await postJson(joinUrl(req.baseUrl, "crm", "v3", "objects", req.object), { properties: req.properties }, opts);
  const recordId = recordIdOf((answer as { id?: unknown } | null)?.id);
  if (!recordId) throw new CrmUpstreamError({ reason: "answer has no record id" });
  return { recordId };
};
