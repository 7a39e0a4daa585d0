// Rate limiting for every surface. The store is chosen once per process from the environment:
// UPSTASH_REDIS_REST_URL/TOKEN -> Upstash REST, else REDIS_URL -> Redis over TCP, else in-process.
import { trustedProxiesFromEnv } from "../lib/client-ip";
import { rateLimitConfigFromEnv, type RateLimitConfig } from "./config";
import type { LimitDecision } from "./layered-limiter";
import { createStore, createSurfaceLimiters, type SurfaceLimiters } from "./limiters";
import type { LimitStore } from "./store";

export type { LimitDecision } from "./layered-limiter";
export { createLayeredLimiter } from "./layered-limiter";
export type { LimitStore, StoreResult } from "./store";
export { keyPrefix } from "./store";
export { createMemoryStore } from "./memory-store";
export { rateLimitConfigFromEnv } from "./config";
export { createSurfaceLimiters } from "./limiters";
export { withMemoryFallback } from "./fallback-store";

type Current = { store: LimitStore; limiters: SurfaceLimiters };
let current: Current | null = null;
let opening: Promise<Current> | null = null;

/** Opens the process's store and limiters once (a failed open is tried again at the next call). */
function openLimiters(): Promise<Current> {
  if (!opening) {
    const config: RateLimitConfig = rateLimitConfigFromEnv();
    const made: Promise<Current> = createStore(config).then(
      (store) => {
        const opened = { store, limiters: createSurfaceLimiters(store, config) };
        if (opening === made) current = opened;
        return opened;
      },
      (err) => {
        if (opening === made) opening = null;
        throw err;
      },
    );
    opening = made;
  }
  return opening;
}

/** `check` with the limiters: at once once they are open (every request after the start), else after opening them. */
function withLimiters(check: (limiters: SurfaceLimiters) => Promise<LimitDecision>): Promise<LimitDecision> {
  return current ? check(current.limiters) : openLimiters().then((opened) => check(opened.limiters));
}

/** /api/v1: per key and per tenant; success headers are the per-key layer's. */
export function limitApiRequest(input: { keyId: string; tenantId: string }): Promise<LimitDecision> {
  return withLimiters((l) => l.api.check({ key: input.keyId, tenant: input.tenantId }));
}

/**
 * The messages of one MCP request that no tool procedure counts (ping, initialize, tools/list,
 * notifications; a batch counts each): per key and per tenant, the /api/v1 buckets, all admitted
 * or none. Success headers are the per-key layer's.
 */
export function limitMcpMessages(input: { keyId: string; tenantId: string; messages: number }): Promise<LimitDecision> {
  return withLimiters((l) => l.api.check({ key: input.keyId, tenant: input.tenantId }, input.messages));
}

/** /api/trpc: per dashboard user and (when the user acts in a tenant) the shared per-tenant bucket. */
export function limitDashboardRequest(input: { userId: string; tenantId: string | null }): Promise<LimitDecision> {
  return withLimiters((l) => l.dashboard.check({ user: input.userId, tenant: input.tenantId }));
}

/**
 * One agent tool call, in one check: per (tenant, tool), the key's own bucket (shared with its
 * /api/v1 requests) and the shared per-tenant bucket, each counted once. Success headers are the
 * tool layer's.
 */
export function limitAgentToolRequest(input: { keyId: string; tenantId: string; tool: string }): Promise<LimitDecision> {
  return withLimiters((l) => l.agentTool.check({ tool: `${input.tenantId}:${input.tool}`, key: input.keyId, tenant: input.tenantId }));
}

/** Inbound /api/webhooks/* receivers: per client IP. */
export function limitInboundRequest(input: { ip: string }): Promise<LimitDecision> {
  return withLimiters((l) => l.inbound.check({ ip: input.ip }));
}

/**
 * A request whose credentials were refused, counted against its client address (IPv6: its /64).
 * Used through `refusalOfFailedAuth` (failed-auth.ts).
 */
export function limitFailedAuthentication(input: { ip: string }): Promise<LimitDecision> {
  return withLimiters((l) => l.failedAuth.check({ "failed-auth-ip": input.ip }));
}

/**
 * Opens the process store and waits (bounded) for its first connection, so a server's first
 * requests are counted in Redis rather than in this process's memory while it is still connecting.
 */
export async function warmUpRateLimiter(timeoutMs = 2000): Promise<void> {
  trustedProxiesFromEnv(); // the per-IP limits key on the client address: a malformed TRUSTED_PROXIES stops the start
  const { store } = await openLimiters();
  await store.ready?.(timeoutMs);
}

/** Releases the process store's connections (graceful shutdown); the next call re-reads the env. */
export async function closeRateLimitStore(): Promise<void> {
  const c = current ?? (await opening?.catch(() => null));
  current = null;
  opening = null;
  await c?.store.close();
}

/** Clears every counter of the process store and drops it, so the next call re-reads the env. */
export async function resetRateLimitStoreForTests(): Promise<void> {
  const store = current?.store ?? (await createStore(rateLimitConfigFromEnv()));
  current = null;
  opening = null;
  try {
    await store.clear();
  } finally {
    await store.close();
  }
}
