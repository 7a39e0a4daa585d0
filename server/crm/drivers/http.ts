// Generic HTTP CRM: POST {base_url}/records/{object} with `{ "fields": { crm_key: value } }`,
// `Authorization: Bearer <token>` and, when given, `Idempotency-Key`. A 2xx JSON answer with an
// `id` (string or number) is the created record.
import { CrmUpstreamError, joinUrl, postJson, recordIdOf, type CrmDriver } from "./driver";

export const httpDriver: CrmDriver = async (req) => {
  const answer = await postJson(
    joinUrl(req.baseUrl, "records", req.object),
    { fields: req.properties },
    {
      token: req.token,
      timeoutMs: req.timeoutMs,
      headers: req.idempotencyKey ? { "idempotency-key": req.idempotencyKey } : undefined,
    },
  );
  const recordId = recordIdOf((answer as { id?: unknown } | null)?.id);
  if (!recordId) throw new CrmUpstreamError({ reason: "answer has no record id" });
  return { recordId };
};
