// Rate-limit configuration from the settings (server/lib/settings.ts holds every default).
import { setting } from "../lib/settings";
import type { StoreKind } from "./store";

export type RateLimitConfig = {
  disabled: boolean;
  windowMs: number;
  /** How long a shared store's call may take before it fails (and the store counts as down). */
  storeTimeoutMs: number;
  /** Namespace of the shared store's keys. */
  keyPrefix: string;
  perKey: number;
  perTenant: number;
  perUser: number;
  perTool: number;
  perIp: number;
  /** Failed authentications per client IP (their own buckets, apart from the webhook receivers' per-IP layer). */
  perFailedAuthIp: number;
  store:
    | { kind: Extract<StoreKind, "upstash">; url: string; token: string }
    | { kind: Extract<StoreKind, "redis">; url: string }
    | { kind: Extract<StoreKind, "memory"> };
};

type Env = Record<string, string | undefined>;

/** Throws on a malformed value, naming the variable; call it at startup to fail early. */
export function rateLimitConfigFromEnv(env: Env = process.env): RateLimitConfig {
  const upstashUrl = setting("UPSTASH_REDIS_REST_URL", env);
  const upstashToken = setting("UPSTASH_REDIS_REST_TOKEN", env);
  const redisUrl = setting("REDIS_URL", env);
  if (upstashUrl && !upstashToken) throw new Error("UPSTASH_REDIS_REST_URL is set but UPSTASH_REDIS_REST_TOKEN is not");
  return {
    disabled: setting("RATE_LIMIT_DISABLED", env),
    windowMs: setting("RATE_LIMIT_WINDOW_SECONDS", env) * 1000,
    storeTimeoutMs: setting("RATE_LIMIT_STORE_TIMEOUT_MS", env),
    keyPrefix: setting("RATE_LIMIT_KEY_PREFIX", env),
    perKey: setting("RATE_LIMIT_PER_KEY", env),
    perTenant: setting("RATE_LIMIT_PER_TENANT", env),
    perUser: setting("RATE_LIMIT_PER_USER", env),
    perTool: setting("RATE_LIMIT_PER_TOOL", env),
    perIp: setting("RATE_LIMIT_PER_IP", env),
    perFailedAuthIp: setting("RATE_LIMIT_FAILED_AUTH_PER_IP", env),
    store:
      upstashUrl && upstashToken ? { kind: "upstash", url: upstashUrl, token: upstashToken } : redisUrl ? { kind: "redis", url: redisUrl } : { kind: "memory" },
  };
}
