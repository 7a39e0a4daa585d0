// A malformed setting stops the server process before it opens anything, and says which setting.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkSettings, setting } from "../../server/lib/settings";

function runLeanFront(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/http/main.ts"], {
    cwd: path.resolve(import.meta.dirname, "../.."),
    // A data dir of its own: were the check missing, the process would open a database here, not the developer's.
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", DATA_DIR: mkdtempSync(path.join(tmpdir(), "tdp-settings-")), PORT: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => (stdout += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stderr, stdout })));
}

describe("settings at startup", () => {
  it("exit_1_when_RATE_LIMIT_STORE_TIMEOUT_MS_is_not_a_number_and_stderr_names_it", async () => {
    const { code, stderr, stdout } = await runLeanFront({ RATE_LIMIT_STORE_TIMEOUT_MS: "abc" });
    expect(code).toBe(1);
    expect(stderr).toContain('RATE_LIMIT_STORE_TIMEOUT_MS must be a positive integer, got "abc"');
    expect(stdout).not.toContain("Ready on");
  });

  it("exit_1_lists_every_malformed_setting", async () => {
    const { code, stderr } = await runLeanFront({
      PORT: "70000",
      LOG_LEVEL: "loud",
      UPSTASH_REDIS_REST_URL: "ftp://x",
      DATABASE_URL: "",
      CHANNEL_DRIVER: "smtp",
    });
    expect(code).toBe(1);
    expect(stderr).toContain('PORT must be a port number, got "70000"');
    expect(stderr).toContain('LOG_LEVEL must be one of info, warn, silent, got "loud"');
    expect(stderr).toContain('UPSTASH_REDIS_REST_URL must be an http(s) URL, got "ftp://x"');
    expect(stderr).toContain('CHANNEL_DRIVER must be one of record, http, got "smtp"');
  });

  it("a_read_of_a_malformed_setting_throws_naming_it", () => {
    expect(() => checkSettings({ INNGEST_BASE_URL: "not a url" })).toThrow('INNGEST_BASE_URL must be an http(s) URL, got "not a url"');
    expect(() => setting("DEFAULT_PHONE_REGION", { DEFAULT_PHONE_REGION: "USA" })).toThrow('DEFAULT_PHONE_REGION must be a two-letter country code, got "USA"');
  });

  it("defaults_apply_when_unset_or_empty_and_values_are_typed", () => {
    expect([setting("PORT", {}), setting("PORT", { PORT: " " }), setting("PORT", { PORT: "8080" })]).toEqual([3000, 3000, 8080]);
    expect([setting("RATE_LIMIT_DISABLED", {}), setting("RATE_LIMIT_DISABLED", { RATE_LIMIT_DISABLED: "yes" })]).toEqual([false, true]);
    expect(setting("WEBHOOK_RETRY_DELAYS_MS", { WEBHOOK_RETRY_DELAYS_MS: "0,1,2,3,4,5" })).toEqual([0, 1, 2, 3, 4, 5]);
    expect(setting("AUTH_TRUSTED_ORIGINS", { AUTH_TRUSTED_ORIGINS: "https://a.example, https://b.example" })).toEqual([
      "https://a.example",
      "https://b.example",
    ]);
    expect(() => checkSettings({})).not.toThrow();
  });
});
