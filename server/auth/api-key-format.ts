// API key format: `xapk_live_` + 48 hex (24 random bytes) = 58 characters. The first 22 characters
// stay readable for lookup; the remaining 36 are stored only as sha256(salt || rest).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const KEY_TAG = "live";
const KEY_PREFIX = `xapk_${KEY_TAG}_`;
export const LOOKUP_PREFIX_LENGTH = 22;
/** The shape accepted before any lookup (other tags follow the same shape; only `live` is issued). */
const TOKEN_SHAPE = /^xapk_[a-z]{2,10}_[0-9a-f]{48}$/;
const BEARER = /^Bearer ([^\s]+)$/;

export type GeneratedKey = { plaintext: string; prefix: string; last4: string; salt: string; hash: string };

function hashSecret(salt: string, rest: string): string {
  return createHash("sha256").update(salt).update(rest).digest("hex");
}

export function generateApiKey(): GeneratedKey {
  const plaintext = KEY_PREFIX + randomBytes(24).toString("hex");
  const salt = randomBytes(16).toString("hex");
  return {
    plaintext,
    prefix: plaintext.slice(0, LOOKUP_PREFIX_LENGTH),
    last4: plaintext.slice(-4),
    salt,
    hash: hashSecret(salt, plaintext.slice(LOOKUP_PREFIX_LENGTH)),
  };
}

/** The token of a well-formed `Authorization: Bearer <key>` header, or null. No I/O. */
export function parseBearerToken(header: string | null | undefined): string | null {
  const match = header ? BEARER.exec(header.trim()) : null;
  if (!match || !TOKEN_SHAPE.test(match[1])) return null;
  return match[1];
}

/** Constant-time check of a token against its stored salt and hash. */
export function verifySecret(token: string, salt: string, storedHash: string): boolean {
  const actual = Buffer.from(hashSecret(salt, token.slice(LOOKUP_PREFIX_LENGTH)), "hex");
  const expected = Buffer.from(storedHash, "hex");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
