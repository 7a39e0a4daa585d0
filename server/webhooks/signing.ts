// Subscription secrets and the signatures of a delivery. One secret (`whsec_` + 48 hex), two keys:
// `x-webhook-signature` is keyed with the UTF-8 bytes of the whole secret string (the original
// contract), `webhook-signature` as the Standard Webhooks specification prescribes, with the base64
// decoding of the part after `whsec_` (48 hex digits are valid base64: 36 bytes), so any stock
// verifier (`new Webhook(secret)`, no options) accepts our deliveries.
import { createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto";

const SECRET_PREFIX_LENGTH = 12;

export const generateWebhookSecret = () => `whsec_${randomBytes(24).toString("hex")}`;
export const secretPrefix = (secret: string) => secret.slice(0, SECRET_PREFIX_LENGTH);

/**
 * The HMAC keys of a secret, made once: preparing a key from a string or bytes is most of the cost
 * of signing a small body, twice per delivery. Bounded; never logged.
 */
const keys = new Map<string, { body: KeyObject; standard: KeyObject }>();
function keysOf(secret: string) {
  let k = keys.get(secret);
  if (!k) {
    if (keys.size >= 1000) keys.clear();
    k = { body: createSecretKey(Buffer.from(secret, "utf8")), standard: createSecretKey(standardWebhookKey(secret)) };
    keys.set(secret, k);
  }
  return k;
}

/** `x-webhook-signature`: lowercase hex HMAC-SHA256 of the raw body bytes. */
export const signBody = (secret: string, body: string) => createHmac("sha256", keysOf(secret).body).update(body, "utf8").digest("hex");

/** The Standard Webhooks key of a secret: the base64 decoding of what follows `whsec_`. */
const standardWebhookKey = (secret: string) => Buffer.from(secret.slice("whsec_".length), "base64");

/** `webhook-signature` of Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export const standardWebhookSignature = (secret: string, id: string, timestampSeconds: number, body: string) =>
  `v1,${createHmac("sha256", keysOf(secret).standard).update(`${id}.${timestampSeconds}.${body}`, "utf8").digest("base64")}`;
