// The lean front reads a request body whole through the request's events (one promise per body,
// server/lib/request-body.ts), with the same guarantees as the chunk-by-chunk reader: the exact
// bytes of a chunked body; over 1 MiB (undeclared, chunked) a 413 that is written while the
// connection stays up, then a second request on the same keep-alive connection is answered; a
// declared length over 1 MiB is a 413 before a byte is read; a client that goes away mid-body
// fails the read instead of leaving it pending. A real node:http server on 127.0.0.1.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../server/lib/errors";
import { bodyOfNodeRequest, MAX_BODY_BYTES, readLimitedBody } from "../../server/lib/request-body";

describe("request bodies read whole from node:http", () => {
  let server: Server;
  let port: number;
  const outcomes: string[] = [];

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      try {
        const text = await readLimitedBody(req.headers["content-length"] ?? null, bodyOfNodeRequest(req));
        outcomes.push(`read ${text.length}`);
        res.writeHead(200, { "content-type": "text/plain" }).end(`${text.length}:${text.slice(0, 20)}`);
      } catch (err) {
        outcomes.push(err instanceof AppError ? `refused ${err.status}` : `failed ${(err as Error).message}`);
        if (!res.destroyed) res.writeHead(err instanceof AppError ? err.status : 500).end(err instanceof Error ? err.message : "");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Raw HTTP/1.1 on one socket: every answer's status line, in order. */
  function raw(writes: (string | Buffer)[], answers: number): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let text = "";
      socket.on("data", (d) => {
        text += d.toString("latin1");
        const statuses = text.match(/^HTTP\/1\.1 \d+/gm) ?? [];
        if (statuses.length >= answers) {
          socket.destroy();
          resolve(statuses);
        }
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text.match(/^HTTP\/1\.1 \d+/gm) ?? []));
      for (const w of writes) socket.write(w);
    });
  }

  const chunk = (data: string | Buffer) => {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
  };

  it("a_chunked_body_is_read_byte_for_byte", async () => {
    // "é" (0xc3 0xa9) split across two chunks: decoded from the joined bytes, not chunk by chunk.
    const parts = [Buffer.from('{"a":"'), Buffer.from([0xc3]), Buffer.from([0xa9]), Buffer.from('tude"}')];
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/", headers: { "transfer-encoding": "chunked" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve(`${res.statusCode} ${body}`));
      });
      req.on("error", reject);
      (async () => {
        for (const p of parts) {
          req.write(p);
          await new Promise((r) => setTimeout(r, 20));
        }
        req.end();
      })();
    });
    expect(answer).toBe('200 13:{"a":"étude"}');
  });

  it("an_undeclared_body_over_1_mib_is_413_and_the_keep_alive_connection_answers_the_next_request", async () => {
    const big = Buffer.alloc(256 * 1024, "x");
    const oversized = [
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
      ...Array.from({ length: MAX_BODY_BYTES / big.length + 2 }, () => chunk(big)),
      "0\r\n\r\n",
    ];
    const next = 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"b":1}';
    expect(await raw([...oversized, next], 2)).toEqual(["HTTP/1.1 413", "HTTP/1.1 200"]);
  });

  it("a_declared_length_over_1_mib_is_413_before_a_byte_is_read", async () => {
    const before = outcomes.length;
    expect(await raw([`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\nConnection: close\r\n\r\n`], 1)).toEqual(["HTTP/1.1 413"]);
    expect(outcomes.slice(before)).toEqual(["refused 413"]);
  });

  it("a_client_gone_mid_body_fails_the_read_instead_of_leaving_it_pending", async () => {
    const before = outcomes.length;
    const socket = connect(port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"partial":');
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    const deadline = Date.now() + 3_000;
    while (outcomes.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(outcomes.slice(before)).toEqual([expect.stringMatching(/^failed /)]);
  });
});
