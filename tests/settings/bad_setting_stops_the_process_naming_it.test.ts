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

const INNGEST_WITHOUT_URL =
  "PUBLIC_BASE_URL must be set when Inngest is configured (INNGEST_EVENT_KEY, INNGEST_SIGNING_KEY or INNGEST_BASE_URL): Inngest is registered at <PUBLIC_BASE_URL>/api/inngest (or set INNGEST_SERVE_ORIGIN)";

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
    expect(stderr).toContain('LOG_LEVEL must be one of debug, info, warn, silent, got "loud"');
    expect(stderr).toContain('UPSTASH_REDIS_REST_URL must be an http(s) URL, got "ftp://x"');
    expect(stderr).toContain('CHANNEL_DRIVER must be one of record, http, got "smtp"');
  });

  it("exit_1_when_Inngest_is_configured_without_PUBLIC_BASE_URL_and_stderr_names_it", async () => {
    // Inngest would otherwise be told to call back whatever Host a sync request carried (docs/inngest.md).
    const { code, stderr, stdout } = await runLeanFront({ INNGEST_SIGNING_KEY: "signkey-prod-0123", INNGEST_EVENT_KEY: "event-key" });
    expect(code).toBe(1);
    expect(stderr).toContain(`${INNGEST_WITHOUT_URL}\n`);
    expect(stderr).not.toContain("signkey-prod-0123");
    expect(stdout).not.toContain("Ready on");
  });

  it("Inngest_needs_PUBLIC_BASE_URL_or_INNGEST_SERVE_ORIGIN_except_with_a_dev_server", () => {
    for (const inngest of [
      { INNGEST_SIGNING_KEY: "k" },
      { INNGEST_EVENT_KEY: "k" },
      { INNGEST_BASE_URL: "http://inngest.internal:8288" },
      { INNGEST_SIGNING_KEY: "k", INNGEST_DEV: "0" },
    ]) {
      expect(() => checkSettings(inngest), JSON.stringify(inngest)).toThrow(INNGEST_WITHOUT_URL);
      expect(() => checkSettings({ ...inngest, PUBLIC_BASE_URL: "https://api.example.com" })).not.toThrow();
      expect(() => checkSettings({ ...inngest, INNGEST_SERVE_ORIGIN: "https://api.example.com" })).not.toThrow();
    }
    expect(() => checkSettings({ INNGEST_DEV: "1" })).not.toThrow();
    expect(() => checkSettings({ INNGEST_DEV: "http://127.0.0.1:8288", INNGEST_EVENT_KEY: "k" })).not.toThrow();
    // A malformed value is named as such, not as a missing one.
    expect(() => checkSettings({ INNGEST_SIGNING_KEY: "k", PUBLIC_BASE_URL: "api.example.com" })).toThrow(
      'invalid settings:\n  PUBLIC_BASE_URL must be an http(s) URL, got "api.example.com"',
    );
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
