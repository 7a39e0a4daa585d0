// Subscription secrets and the signatures of a delivery. The HMAC key of both signatures is the
// UTF-8 bytes of the whole secret string (`whsec_` + 48 hex), as DECISIONS.md fixes for
// `x-webhook-signature`. The Standard Webhooks library decodes base64 after `whsec_` by default,
// so its users pass `{ format: "raw" }` (or base64 of the whole secret): same key, one secret.
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX_LENGTH = 12;

export const generateWebhookSecret = () => `whsec_${randomBytes(24).toString("hex")}`;
export const secretPrefix = (secret: string) => secret.slice(0, SECRET_PREFIX_LENGTH);

/** `x-webhook-signature`: lowercase hex HMAC-SHA256 of the raw body bytes. */
export const signBody = (secret: string, body: string) => createHmac("sha256", secret).update(body, "utf8").digest("hex");

/** `webhook-signature` of Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export const standardWebhookSignature = (secret: string, id: string, timestampSeconds: number, body: string) =>
  `v1,${createHmac("sha256", secret).update(`${id}.${timestampSeconds}.${body}`, "utf8").digest("base64")}`;
