// A client that sends its headers, or its body, slowly cannot hold a connection of the lean
// front: past HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS it is answered 408 and closed.
// An idle keep-alive connection between requests is not a slow request: it stays usable.
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { tenantWithKey } from "../helpers/api";
import { requireNextBuild, startMount } from "../helpers/http-mounts";

requireNextBuild();

const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;

/** Writes `head` then one byte of `trickle` every 100 ms until the server closes; what it answered and when. */
function trickle(port: number, head: string, drip: string): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let answer = "";
    let sent = 0;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      socket.write(head);
      timer = setInterval(() => socket.write(drip[sent++ % drip.length]), 100);
    });
    socket.on("data", (d) => (answer += d.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}

describe("slow clients against the lean front (needs `next build`)", () => {
  let server: Running;
  let key: string;
  let port: number;

  beforeAll(async () => {
    ({ key } = await tenantWithKey());
    server = await startMount("lean", { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS) });
    port = Number(new URL(server.url).port);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("408_and_closed_when_headers_arrive_byte_by_byte_past_the_headers_timeout", async () => {
    const { answer, closedAfterMs } = await trickle(port, "GET /api/v1/offerings HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "abcdefgh");
    expect(answer.startsWith("HTTP/1.1 408 ")).toBe(true);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS);
    expect(closedAfterMs).toBeLessThan(HEADERS_MS + 2_500); // the check runs every second
  });

  it("408_and_closed_when_a_body_trickles_past_the_request_timeout", async () => {
    const head =
      `POST /api/v1/offerings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
    const { answer, closedAfterMs } = await trickle(port, head, '{"title":"slow"');
    expect(answer.startsWith("HTTP/1.1 408 ")).toBe(true);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS + 2_500);
  });

  it("keepalive_connection_idle_longer_than_the_headers_timeout_still_serves_the_next_request", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; socket: net.Socket }>((resolve, reject) => {
        http
          .get(`${server.url}/api/v1/offerings?limit=1`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: res.socket }));
          })
          .on("error", reject);
      });
    const first = await get();
    await new Promise((r) => setTimeout(r, HEADERS_MS + 2_000)); // idle past the headers timeout and a check
    const second = await get();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.socket).toBe(first.socket); // the same connection, not a new one
    agent.destroy();
  });
});
