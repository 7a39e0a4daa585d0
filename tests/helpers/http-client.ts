// Real HTTP clients for shutdown and timeout tests: a request whose body is sent in two parts (so
// it is in flight at the server for as long as the test says), keep-alive connections left idle,
// and a check that a port refuses connections.
import http from "node:http";
import net from "node:net";

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/**
 * Sends the headers and the first half of `body` now (`sent` resolves once they are written on a
 * connected socket); `finish()` sends the rest. `answer` settles with the response, or rejects
 * with the connection's error (a reset is `ECONNRESET`).
 */
export function splitBodyRequest(url: string, opts: { method: string; headers: Record<string, string>; body: string }) {
  const bytes = Buffer.from(opts.body);
  const half = Math.floor(bytes.length / 2);
  const req = http.request(url, {
    method: opts.method,
    agent: false,
    headers: { ...opts.headers, "content-length": String(bytes.length) },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
  });
  answer.catch(() => {}); // observed by the test through `answer`
  const sent = new Promise<void>((resolve, reject) => req.write(bytes.subarray(0, half), (err) => (err ? reject(err) : resolve())));
  sent.catch(() => {});
  return { sent, answer, finish: () => void req.end(bytes.subarray(half)) };
}

/**
 * Opens `count` keep-alive connections, each used for one GET of `url` and then left idle. Each
 * entry tells how its connection ended: `closed` (cleanly, by the server) or the error it got.
 */
export async function idleKeepAliveConnections(url: string, count: number, headers: Record<string, string> = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: count });
  const sockets = new Set<net.Socket>();
  agent.on("free", (socket: net.Socket) => sockets.add(socket));
  const statuses = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve, reject) => {
          http
            .get(url, { agent, headers }, (res) => {
              res.resume();
              res.on("end", () => resolve(res.statusCode ?? 0));
            })
            .on("error", reject);
        }),
    ),
  );
  await new Promise((r) => setImmediate(r)); // the "free" events follow the responses' ends
  const endings = [...sockets].map(
    (socket) =>
      new Promise<string>((resolve) => {
        let error: string | null = null;
        socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
        socket.on("close", () => resolve(error ?? "closed"));
      }),
  );
  return { statuses, connections: sockets.size, endings: Promise.all(endings), destroy: () => agent.destroy() };
}

/**
 * A GET on a connection of its own. Accepted after every connection made before it, and read after
 * what those sent, so its answer means the server has received what they sent.
 */
export function roundTrip(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
      .on("error", reject);
  });
}

/** Resolves once a TCP connection to `port` is refused (rejects after `timeoutMs`). */
export async function waitUntilRefused(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
    });
    if (refused) return;
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves with the child's exit code and how long it took from now (rejects after `timeoutMs`). */
export function exitOf(
  proc: import("node:child_process").ChildProcess,
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  if (proc.exitCode !== null) return Promise.resolve({ code: proc.exitCode, signal: null, ms: 0 });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process still running after ${timeoutMs} ms`)), timeoutMs);
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: Date.now() - started });
    });
  });
}
