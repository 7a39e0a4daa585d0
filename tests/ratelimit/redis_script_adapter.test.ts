// Pin detection: @upstash/ratelimit's sliding-window script, run on a stock redis-server through
// the ioredis adapter. An upgrade of the library that changes the script fails here first.
import { Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createScriptAdapter, sha1, stripShebang } from "../../server/ratelimit/redis-script-adapter";
import { RedisServer } from "../helpers/redis-server";
import { freezeDateAt, readyClient, restoreDateAfterEach } from "./store-fixtures";

const PINNED_SLIDING_WINDOW_SHA = "74740bb3d7792848093cdef586b6b6037c455fd6"; // @upstash/ratelimit 2.2.0

let server: RedisServer;
let client: Redis;

beforeAll(async () => {
  server = await RedisServer.start();
  client = await readyClient(server.url);
});
beforeEach(async () => {
  await client.flushdb();
  await client.script("FLUSH");
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});
restoreDateAfterEach();

const slidingWindow = (adapter: ReturnType<typeof createScriptAdapter>, limit: number) =>
  new Ratelimit({
    redis: adapter as unknown as ConstructorParameters<typeof Ratelimit>[0]["redis"],
    limiter: Ratelimit.slidingWindow(limit, "60 s"),
    prefix: "rl",
    timeout: 0,
    ephemeralCache: false,
    enableTelemetry: false,
  });

describe("ioredis script adapter for @upstash/ratelimit on a real redis-server", () => {
  it("sees exactly the pinned sliding-window script, whose shebang stock Redis rejects", async () => {
    const adapter = createScriptAdapter(client);
    await slidingWindow(adapter, 200).limit("pin");
    await slidingWindow(adapter, 200).limit("pin", { rate: -1 }); // a refund runs the same script

    expect([...adapter.scripts.keys()]).toEqual([PINNED_SLIDING_WINDOW_SHA]);
    const script = adapter.scripts.get(PINNED_SLIDING_WINDOW_SHA)!;
    expect(sha1(script)).toBe(PINNED_SLIDING_WINDOW_SHA);
    expect(script.split("\n")[0]).toBe("#!lua flags=allow-key-locking");
    await expect(client.eval(script, 2, "rl:x:1", "rl:x:0", 10, Date.now(), 60000, 1)).rejects.toThrow("Unexpected flag in script shebang: allow-key-locking");
    expect(stripShebang(script).startsWith("#!")).toBe(false);
    expect(stripShebang("return 1")).toBe("return 1");
  });

  it("admits 200 of 205 with the library's exact remaining and reset, under the rl: namespace", async () => {
    const minute = Date.UTC(2030, 0, 1, 0, 0, 0);
    freezeDateAt(minute + 5000);
    const rl = slidingWindow(createScriptAdapter(client), 200);
    const results = [];
    for (let i = 0; i < 205; i++) results.push(await rl.limit("key:k1"));

    expect(results.filter((r) => r.success)).toHaveLength(200);
    results.forEach((r, i) => {
      expect({ success: r.success, limit: r.limit, remaining: r.remaining, reset: r.reset }).toEqual({
        success: i < 200,
        limit: 200,
        remaining: i < 200 ? 199 - i : 0,
        reset: minute + 60_000,
      });
    });
    const window = Math.floor((minute + 5000) / 60_000);
    expect(await client.keys("*")).toEqual([`rl:key:k1:${window}`]);
    expect(await client.get(`rl:key:k1:${window}`)).toBe("200");
    const ttl = await client.pttl(`rl:key:k1:${window}`);
    expect(ttl).toBeGreaterThan(120_000);
    expect(ttl).toBeLessThanOrEqual(121_000);
  });

  it("falls back to EVAL when the server has lost its scripts (restart, SCRIPT FLUSH)", async () => {
    const rl = slidingWindow(createScriptAdapter(client), 10);
    expect((await rl.limit("flush")).remaining).toBe(9);
    await client.script("FLUSH");
    expect((await rl.limit("flush")).remaining).toBe(8);
    expect((await rl.limit("flush")).remaining).toBe(7);
  });
});
