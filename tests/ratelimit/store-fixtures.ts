// Shared by the behavioural tests: the same cases run against a real redis-server (through the
// ioredis store) and against the in-process store.
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, vi } from "vitest";
import { createMemoryStore, type LimitStore } from "../../server/ratelimit";
import { createLimiterRedisClient, createRedisStore } from "../../server/ratelimit/redis-store";
import { RedisServer } from "../helpers/redis-server";

export const STORE_KINDS = ["redis", "memory"] as const;
export type TestStoreKind = (typeof STORE_KINDS)[number];

export async function readyClient(url: string): Promise<Redis> {
  const client = createLimiterRedisClient(url);
  if (client.status !== "ready") await new Promise((resolve) => client.once("ready", resolve));
  return client;
}

/** Registers hooks in the enclosing describe; the returned getter gives a store emptied before each test. */
export function useStore(kind: TestStoreKind): () => LimitStore {
  let store: LimitStore | undefined;
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  if (kind === "redis") {
    beforeAll(async () => {
      server = await RedisServer.start();
      client = await readyClient(server.url);
      store = createRedisStore(client);
    });
    beforeEach(async () => store!.clear());
    afterAll(async () => {
      client?.disconnect();
      await server?.stop();
    });
  } else {
    beforeEach(() => {
      store = createMemoryStore();
    });
  }
  return () => store!;
}

/** Freezes Date (only Date: timers stay real, so Redis I/O still works) at `ms`. */
export function freezeDateAt(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(ms);
}

export function restoreDateAfterEach(): void {
  afterEach(() => {
    vi.useRealTimers();
  });
}

export const DEFAULTS = {
  disabled: false,
  windowMs: 60_000,
  perKey: 200,
  perTenant: 5000,
  perUser: 200,
  perTool: 50,
  perIp: 500,
  perFailedAuthIp: 500,
};
