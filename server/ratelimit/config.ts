// Rate-limit configuration from the environment; defaults are the specification's values.
import type { StoreKind } from "./store";

export type RateLimitConfig = {
  disabled: boolean;
  windowMs: number;
  /** How long a shared store's call may take before it fails (and the store counts as down). */
  storeTimeoutMs: number;
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

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

/** Throws on a malformed value, naming the variable; call it at startup to fail early. */
export function rateLimitConfigFromEnv(env: Env = process.env): RateLimitConfig {
  const upstashUrl = env.UPSTASH_REDIS_REST_URL?.trim();
  const upstashToken = env.UPSTASH_REDIS_REST_TOKEN?.trim();
  const redisUrl = env.REDIS_URL?.trim();
  if (upstashUrl && !upstashToken) throw new Error("UPSTASH_REDIS_REST_URL is set but UPSTASH_REDIS_REST_TOKEN is not");
  return {
    disabled: ["1", "true", "yes"].includes((env.RATE_LIMIT_DISABLED ?? "").trim().toLowerCase()),
    windowMs: positiveInt(env, "RATE_LIMIT_WINDOW_SECONDS", 60) * 1000,
    storeTimeoutMs: positiveInt(env, "RATE_LIMIT_STORE_TIMEOUT_MS", 1000),
    perKey: positiveInt(env, "RATE_LIMIT_PER_KEY", 200),
    perTenant: positiveInt(env, "RATE_LIMIT_PER_TENANT", 5000),
    perUser: positiveInt(env, "RATE_LIMIT_PER_USER", 200),
    perTool: positiveInt(env, "RATE_LIMIT_PER_TOOL", 50),
    perIp: positiveInt(env, "RATE_LIMIT_PER_IP", 500),
    perFailedAuthIp: positiveInt(env, "RATE_LIMIT_FAILED_AUTH_PER_IP", 500),
    store:
      upstashUrl && upstashToken
        ? { kind: "upstash", url: upstashUrl, token: upstashToken }
        : redisUrl
          ? { kind: "redis", url: redisUrl }
          : { kind: "memory" },
  };
}
