// The secret an invitation link carries: 32 random bytes (base64url, 43 characters), separate from the
// invitation's id (which members see in the list and the audit log). Only its SHA-256 is stored: a
// 256-bit random value needs no salt or slow hash, and the link is found by that hash, one indexed read.
import { createHash, randomBytes } from "node:crypto";

export const hashInvitationSecret = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

export function newInvitationSecret(): { secret: string; secretHash: string } {
  const secret = randomBytes(32).toString("base64url");
  return { secret, secretHash: hashInvitationSecret(secret) };
}
