// SIGTERM while clients send on their idle keep-alive connections: a request that reached the
// socket around the signal (here: sent from 0 to 10 ms after it) is answered — 201, or a clean 503
// with Connection: close — never reset unanswered, since the client could not tell whether it ran.
// Raw sockets, so the test sees exactly what the server did with each connection.
import net from "node:net";
import { afterEach, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { call, tenantWithKey } from "../helpers/api";
import { startMount } from "../helpers/http-mounts";
import { exitOf } from "../helpers/http-client";

let server: Running | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const CONNECTIONS = 22;
type Parsed = { status: number; headers: Record<string, string>; body: string };

/** The first complete HTTP response in `text`, or null while it is incomplete. */
function firstResponse(text: string): { response: Parsed; rest: string } | null {
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return null;
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  const length = Number(headers["content-length"] ?? 0);
  if (text.length < end + 4 + length) return null;
  return { response: { status: Number(statusLine.split(" ")[1]), headers, body: text.slice(end + 4, end + 4 + length) }, rest: text.slice(end + 4 + length) };
}

/** A connection that has answered one GET and is left idle; `ended` tells what came back after that. */
async function idleConnection(port: number, auth: string) {
  const socket = net.connect(port, "127.0.0.1");
  socket.setEncoding("latin1");
  let text = "";
  let error: string | null = null;
  socket.on("data", (d: string) => (text += d));
  socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  const ended = new Promise<{ error: string | null; responses: Parsed[] }>((resolve) =>
    socket.on("close", () => {
      const responses: Parsed[] = [];
      for (let parsed = firstResponse(text); parsed; parsed = firstResponse(parsed.rest)) responses.push(parsed.response);
      resolve({ error, responses });
    }),
  );
  socket.write(`GET /api/v1/offerings?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n\r\n`);
  while (!firstResponse(text)) await new Promise((r) => setTimeout(r, 5));
  return { socket, ended };
}

it("sigterm_answers_every_post_sent_on_an_idle_keepalive_connection_within_10ms_of_the_signal", async () => {
  const { key } = await tenantWithKey();
  const auth = `Bearer ${key}`;
  server = await startMount("lean", { SHUTDOWN_TIMEOUT_MS: "20000" });
  const port = Number(new URL(server.url).port);
  const connections = await Promise.all(Array.from({ length: CONNECTIONS }, () => idleConnection(port, auth)));

  const exited = exitOf(server.proc, 30_000);
  server.proc.kill("SIGTERM");
  connections.forEach(({ socket }, i) => {
    const body = JSON.stringify({ title: `Sent at the signal ${i}`, price: "1.00", price_currency: "USD" });
    const request =
      `POST /api/v1/offerings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const send = () => socket.write(request);
    // 0 to 10 ms after the signal (the first ones before the process has even seen it).
    if (i % 11 === 0) send();
    else setTimeout(send, i % 11);
  });

  const endings = await Promise.all(connections.map((c) => c.ended));
  // Each connection: its GET, then exactly one answer to its POST, and a clean close.
  expect(endings.map((e) => e.error)).toEqual(Array(CONNECTIONS).fill(null));
  expect(endings.map((e) => e.responses.length)).toEqual(Array(CONNECTIONS).fill(2));
  const answers = endings.map((e) => e.responses[1]);
  for (const answer of answers) {
    if (answer.status === 201) continue;
    expect([answer.status, answer.headers.connection, answer.headers["retry-after"]]).toEqual([503, "close", expect.any(String)]);
  }
  expect(await exited).toMatchObject({ code: 0, signal: null });

  const created = answers
    .filter((a) => a.status === 201)
    .map((a) => JSON.parse(a.body).id)
    .sort();
  expect(created.length).toBeGreaterThan(0);
  const listed = await call("GET", "/offerings?limit=100", { key });
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((o: { id: string }) => o.id).sort()).toEqual(created);
}, 120_000);
