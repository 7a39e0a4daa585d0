// The in-process store must answer exactly like @upstash/ratelimit's script on a real Redis (and,
// for weighted counts, like library-store.ts's all-or-nothing script).
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type StoreResult } from "../../server/ratelimit";
import { createRedisStore } from "../../server/ratelimit/redis-store";
import { RedisServer } from "../helpers/redis-server";
import { freezeDateAt, readyClient, restoreDateAfterEach } from "./store-fixtures";

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await RedisServer.start();
  client = await readyClient(server.url);
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});
restoreDateAfterEach();

describe("memory store parity with the library on Redis", () => {
  it("gives identical results for the same seeded sequence of counts, refunds and clock moves", async () => {
    const redis = createRedisStore(client);
    const memory = createMemoryStore();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const windowMs = 1000;
    let now = Date.UTC(2030, 0, 1);
    const seen: { redis: StoreResult; memory: StoreResult }[] = [];
    for (let step = 0; step < 600; step++) {
      now += Math.floor(rand() * 120); // ~17 requests per window, over 2 keys, against a limit of 6 each
      freezeDateAt(now);
      const id = `key:${Math.floor(rand() * 2)}`;
      const rate = rand() < 0.05 ? -1 : 1;
      const r = await redis.limit(id, 6, windowMs, rate);
      const m = await memory.limit(id, 6, windowMs, rate);
      seen.push({ redis: r, memory: m });
    }
    expect(seen.map((s) => s.memory)).toEqual(seen.map((s) => s.redis));
    // The sequence exercises both outcomes and partial previous windows.
    expect(seen.filter((s) => !s.redis.success).length).toBeGreaterThan(50);
    expect(seen.filter((s) => s.redis.success).length).toBeGreaterThan(200);
  });

  it("gives identical results for weighted counts and refunds (MCP batches) mixed with single ones", async () => {
    const redis = createRedisStore(client);
    const memory = createMemoryStore();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const windowMs = 1000;
    let now = Date.UTC(2030, 0, 2);
    const seen: { rate: number; redis: StoreResult; memory: StoreResult }[] = [];
    for (let step = 0; step < 600; step++) {
      now += Math.floor(rand() * 120);
      freezeDateAt(now);
      const id = `key:${Math.floor(rand() * 2)}`;
      const pick = rand();
      const rate = pick < 0.05 ? -3 : pick < 0.5 ? 1 : 2 + Math.floor(rand() * 5); // 2..6 against a limit of 12
      seen.push({ rate, redis: await redis.limit(id, 12, windowMs, rate), memory: await memory.limit(id, 12, windowMs, rate) });
    }
    expect(seen.map((s) => s.memory)).toEqual(seen.map((s) => s.redis));
    const weighted = seen.filter((s) => s.rate > 1);
    expect(weighted.filter((s) => !s.redis.success).length).toBeGreaterThan(30);
    expect(weighted.filter((s) => s.redis.success).length).toBeGreaterThan(60);
  });
});
