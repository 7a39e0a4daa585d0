// Secret box: AES-256-GCM encryption of secrets at rest (CRM credentials, webhook signing secrets).
// Key: ENCRYPTION_KEY (32 bytes, hex or base64). Without it, a key is generated once and kept in
// `<DATA_DIR>/encryption.key` (0600) so a fresh clone works; in production that is a warning,
// because losing the file makes every stored secret unreadable.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { dataDir } from "../db/client";
import { log } from "../lib/log";
import { setting } from "../lib/settings";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

let cached: { source: string; key: Buffer } | undefined;
let warnedAboutKeyFile = false;

/** Parses a 32-byte key written as 64 hex characters or as base64; throws on anything else. */
export function parseEncryptionKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  const isHex = /^[0-9a-fA-F]{64}$/.test(trimmed);
  const isBase64 = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed);
  const key = isHex ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (!(isHex || isBase64) || key.length !== KEY_BYTES) {
    // Never echo the value: it is (meant to be) a secret.
    throw new Error(`${origin} must be 32 bytes, written as 64 hex characters or base64`);
  }
  return key;
}

function keyFileKey(file: string): Buffer {
  try {
    return parseEncryptionKey(readFileSync(file, "utf8"), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // "wx": if another process created it meanwhile, keep theirs (read below).
    writeFileSync(file, randomBytes(KEY_BYTES).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return parseEncryptionKey(readFileSync(file, "utf8"), file);
}

function encryptionKey(): Buffer {
  const fromEnv = setting("ENCRYPTION_KEY");
  const source = fromEnv ? `env:${fromEnv}` : `file:${path.join(dataDir(), "encryption.key")}`;
  if (cached?.source === source) return cached.key;
  const key = fromEnv ? parseEncryptionKey(fromEnv, "ENCRYPTION_KEY") : keyFileKey(source.slice(5));
  if (!fromEnv && process.env.NODE_ENV === "production" && setting("DATABASE_URL") && !warnedAboutKeyFile) {
    warnedAboutKeyFile = true;
    log.warn(
      {
        key_file: source.slice(5),
      },
      "ENCRYPTION_KEY is not set: using the key file; set ENCRYPTION_KEY in production",
    );
  }
  cached = { source, key };
  return key;
}

/** Encrypts a secret; the result (`v1.<iv>.<tag>.<ciphertext>`, base64url) is safe to store. */
export function encryptSecret(plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", encryptionKey(), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
}

/** Whether `text` is what `encryptSecret` produced (JSON text, for one, never is: it cannot begin with a letter `v`). */
export const isSealedSecret = (text: string): boolean => text.startsWith(`${VERSION}.`);

/** Decrypts what `encryptSecret` produced; throws if the key is wrong or the text was altered. */
export function decryptSecret(ciphertext: string): string {
  const parts = ciphertext.split(".");
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error("secret-box: not a v1 sealed secret");
  const [iv, tag, body] = parts.slice(1).map((part) => Buffer.from(part, "base64url"));
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error("secret-box: malformed sealed secret");
  try {
    const decipher = createDecipheriv("aes-256-gcm", encryptionKey(), iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("secret-box: cannot decrypt (wrong ENCRYPTION_KEY or altered data)");
  }
}
