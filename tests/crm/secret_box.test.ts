import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, parseEncryptionKey } from "../../server/crypto/secret-box";

const saved = { key: process.env.ENCRYPTION_KEY, dir: process.env.DATA_DIR };
afterEach(() => {
  if (saved.key === undefined) delete process.env.ENCRYPTION_KEY;
  else process.env.ENCRYPTION_KEY = saved.key;
  // Assigning undefined to process.env would store the string "undefined".
  if (saved.dir === undefined) delete process.env.DATA_DIR;
  else process.env.DATA_DIR = saved.dir;
});

describe("secret box (AES-256-GCM)", () => {
  it("round-trips, with a fresh IV each time", () => {
    const a = encryptSecret("whsec_abc");
    const b = encryptSecret("whsec_abc");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain("whsec_abc");
    expect(decryptSecret(a)).toBe("whsec_abc");
    expect(decryptSecret(encryptSecret(""))).toBe("");
  });

  it("refuses altered ciphertext and a wrong key", () => {
    const sealed = encryptSecret("token");
    const parts = sealed.split(".");
    const flipped = parts[3][0] === "A" ? "B" + parts[3].slice(1) : "A" + parts[3].slice(1);
    expect(() => decryptSecret([...parts.slice(0, 3), flipped].join("."))).toThrow("secret-box: cannot decrypt (wrong ENCRYPTION_KEY or altered data)");
    expect(() => decryptSecret("plaintext")).toThrow("secret-box: not a v1 sealed secret");
    process.env.ENCRYPTION_KEY = "11".repeat(32);
    expect(() => decryptSecret(sealed)).toThrow("wrong ENCRYPTION_KEY");
  });

  it("takes ENCRYPTION_KEY as 64 hex characters or base64 of 32 bytes, and never echoes a bad one", () => {
    process.env.ENCRYPTION_KEY = "ab".repeat(32);
    const hexSealed = encryptSecret("x");
    process.env.ENCRYPTION_KEY = Buffer.from("ab".repeat(32), "hex").toString("base64");
    expect(decryptSecret(hexSealed)).toBe("x");
    process.env.ENCRYPTION_KEY = "too-short-secret";
    expect(() => encryptSecret("x")).toThrow("ENCRYPTION_KEY must be 32 bytes, written as 64 hex characters or base64");
    try {
      encryptSecret("x");
    } catch (err) {
      expect((err as Error).message).not.toContain("too-short-secret");
    }
    expect(() => parseEncryptionKey("zz".repeat(32), "K")).toThrow("K must be 32 bytes");
  });

  it("without ENCRYPTION_KEY, generates a key file once (mode 0600) and keeps using it", () => {
    delete process.env.ENCRYPTION_KEY;
    process.env.DATA_DIR = mkdtempSync(path.join(tmpdir(), "secret-box-"));
    const sealed = encryptSecret("persisted");
    const file = path.join(process.env.DATA_DIR, "encryption.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    const before = readFileSync(file, "utf8");
    expect(decryptSecret(sealed)).toBe("persisted");
    expect(readFileSync(file, "utf8")).toBe(before);
  });
});
