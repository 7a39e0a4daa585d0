// Outbound keep-alive connections (webhook receivers, CRMs) against real receivers on 127.0.0.1:
// a pooled connection is closed by us before a typical receiver's keep-alive timeout, and a
// request that meets a receiver closing its pooled connection goes once more on a fresh one.
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { guardedPost, IDLE_SOCKET_TIMEOUT_MS } from "../../server/lib/guarded-post";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const post = (port: number, body = "{}") =>
  guardedPost(new URL(`http://127.0.0.1:${port}/hook`), {
    headers: { "content-type": "application/json" },
    body: Buffer.from(body),
    timeoutMs: 5000,
    keepBytes: 1024,
    maxBytes: 4096,
  });

/** Listens on a free port; closing it afterwards also ends the connections still open. */
async function listen(server: net.Server): Promise<number> {
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

/** An HTTP receiver that records each connection's opening and closing time. */
async function receiver(keepAliveTimeoutMs: number) {
  const connections: { openedAt: number; closedAt?: number }[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on("connection", (socket) => {
    const entry = { openedAt: Date.now(), closedAt: undefined as number | undefined };
    connections.push(entry);
    socket.on("close", () => (entry.closedAt = Date.now()));
  });
  return { port: await listen(server), connections };
}

describe("outbound keep-alive sockets", () => {
  it("idle_pooled_connection_is_closed_by_us_before_a_60s_receiver_timeout", async () => {
    const { port, connections } = await receiver(60_000);
    const sentAt = Date.now();
    expect(await post(port)).toEqual({ ok: true, statusCode: 200, body: "ok", retryAfter: null });
    // Wait for the close itself: only our idle timeout can close it this early (the receiver waits 60 s).
    const deadline = Date.now() + IDLE_SOCKET_TIMEOUT_MS + 3000;
    while (connections[0]?.closedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(connections).toHaveLength(1);
    expect(connections[0].closedAt, "the idle connection was closed within the idle timeout").toBeDefined();
    const idleFor = connections[0].closedAt! - sentAt;
    expect(idleFor).toBeGreaterThanOrEqual(IDLE_SOCKET_TIMEOUT_MS - 100);
    expect(idleFor).toBeLessThan(IDLE_SOCKET_TIMEOUT_MS + 2000);
  }, 20_000);

  it("request_on_a_pooled_connection_the_receiver_resets_is_sent_again_on_a_fresh_one", async () => {
    // The race of a receiver closing an idle connection just as we reuse it, made certain: the
    // receiver resets a connection when a second request arrives on it.
    const { port, bodies, connections } = await rawReceiver({ resetSecondRequest: true });
    expect(await post(port, '{"n":1}')).toEqual({ ok: true, statusCode: 200, body: "ok", retryAfter: null });
    expect(await post(port, '{"n":2}')).toEqual({ ok: true, statusCode: 200, body: "ok", retryAfter: null });
    expect(bodies).toEqual(['{"n":1}', '{"n":2}']);
    expect(connections()).toBe(2); // the reset one, then a fresh one for the retry
  });

  it("requests_at_a_short_receiver_keepalive_timeout_never_fail_with_a_reset", async () => {
    // A receiver that announces no keep-alive timeout and drops connections idle for 200 ms, and
    // requests spaced around that instant (some meet the close as they are written).
    const { port, bodies, connections } = await rawReceiver({ idleCloseMs: 200 });
    const results = [];
    for (let i = 0; i < 60; i++) {
      results.push(await post(port, `{"n":${i}}`));
      await new Promise((r) => setTimeout(r, 185 + (i % 7) * 5));
    }
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(bodies).toHaveLength(60);
    expect(connections()).toBeGreaterThan(1);
  }, 30_000);
});

/**
 * A minimal HTTP/1.1 receiver on a raw socket, so the test decides exactly how connections end:
 * it answers 200 "ok" with keep-alive (and no Keep-Alive timeout hint), optionally resets a
 * connection on its second request, or destroys connections idle for `idleCloseMs`.
 */
async function rawReceiver(opts: { resetSecondRequest?: boolean; idleCloseMs?: number }) {
  const bodies: string[] = [];
  let connectionCount = 0;
  const server = net.createServer((socket) => {
    connectionCount++;
    let requests = 0;
    let buffered = "";
    let idle: NodeJS.Timeout | undefined;
    const armIdleClose = () => {
      if (opts.idleCloseMs) idle = setTimeout(() => socket.destroy(), opts.idleCloseMs);
    };
    socket.on("data", (chunk) => {
      clearTimeout(idle);
      buffered += chunk.toString("latin1");
      const end = buffered.indexOf("\r\n\r\n");
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const body = buffered.slice(end + 4, end + 4 + length);
      buffered = buffered.slice(end + 4 + length);
      if (++requests === 2 && opts.resetSecondRequest) return void socket.resetAndDestroy();
      bodies.push(body);
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
      armIdleClose();
    });
    socket.on("close", () => clearTimeout(idle));
    socket.on("error", () => {});
  });
  const port = await listen(server);
  return { port, bodies, connections: () => connectionCount };
}
