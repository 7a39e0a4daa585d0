// The service's limiters, one per surface, over one shared store (the tenant layer is one bucket
// across API keys, dashboard users and agent tools because it is the same key in the same store).
import type { RateLimitConfig } from "./config";
import { withMemoryFallback } from "./fallback-store";
import { createLayeredLimiter, type LayerConfig, type LayeredLimiter } from "./layered-limiter";
import { createMemoryStore } from "./memory-store";
import type { LimitStore } from "./store";

export type SurfaceLimiters = {
  api: LayeredLimiter; // key, tenant
  dashboard: LayeredLimiter; // user, tenant
  agentTool: LayeredLimiter; // tool, key, tenant
  inbound: LayeredLimiter; // ip (webhook receivers)
  failedAuth: LayeredLimiter; // failed-auth-ip (requests whose credentials were refused)
};

/**
 * The configured store; a shared one falls back to this process's memory while it is down. A shared
 * store's client library (ioredis, @upstash/redis and @upstash/ratelimit, about 25 MB of an idle
 * process) is loaded only when one is configured.
 */
export async function createStore(config: RateLimitConfig): Promise<LimitStore> {
  const s = config.store;
  if (s.kind === "upstash") {
    const { createUpstashStore } = await import("./upstash-store");
    return withMemoryFallback(createUpstashStore({ url: s.url, token: s.token, requestTimeoutMs: config.storeTimeoutMs, prefix: config.keyPrefix }));
  }
  if (s.kind === "redis") {
    const { createLimiterRedisClient, createRedisStore } = await import("./redis-store");
    const client = createLimiterRedisClient(s.url, { commandTimeoutMs: config.storeTimeoutMs });
    return withMemoryFallback(createRedisStore(client, { ownsClient: true, prefix: config.keyPrefix }));
  }
  return createMemoryStore();
}

export type LimitsConfig = Omit<RateLimitConfig, "store" | "storeTimeoutMs" | "keyPrefix">;

export function createSurfaceLimiters(store: LimitStore, config: LimitsConfig): SurfaceLimiters {
  const layer = (name: string, limit: number, who: string): LayerConfig => ({
    name,
    limit,
    windowMs: config.windowMs,
    message: `per-${who} rate limit exceeded`,
  });
  const tenant = layer("tenant", config.perTenant, "tenant");
  const make = (...layers: LayerConfig[]) => createLayeredLimiter({ store, layers, disabled: config.disabled });
  return {
    api: make(layer("key", config.perKey, "key"), tenant),
    dashboard: make(layer("user", config.perUser, "user"), tenant),
    agentTool: make(layer("tool", config.perTool, "tool"), layer("key", config.perKey, "key"), tenant),
    inbound: make(layer("ip", config.perIp, "ip")),
    failedAuth: make(layer("failed-auth-ip", config.perFailedAuthIp, "ip")),
  };
}
