// A real webhook consumer on 127.0.0.1: records every request (raw body bytes, headers, arrival
// time) and answers as the test says: a status code, a hang, or a connection reset.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Received = { path: string; headers: http.IncomingHttpHeaders; raw: Buffer; body: any; at: number };
export type Behaviour = number | "hang" | "reset";

export async function startConsumer(initial: Behaviour | ((req: Received, index: number) => Behaviour) = 200) {
  const received: Received[] = [];
  let behaviour = initial;
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
      const entry: Received = { path: req.url ?? "/", headers: req.headers, raw, body, at: Date.now() };
      received.push(entry);
      for (const w of [...waiters]) if (received.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = typeof behaviour === "function" ? behaviour(entry, received.length - 1) : behaviour;
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      if (answer === "reset") {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" }).end(`answer ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    setBehaviour(next: typeof behaviour) {
      behaviour = next;
    },
    /** Resolves when `count` requests have arrived in all (rejects after `timeoutMs`). */
    waitFor(count: number, timeoutMs = 10_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`consumer got ${received.length} of ${count} requests`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Consumer = Awaited<ReturnType<typeof startConsumer>>;

/** Polls `check` until it returns a truthy value. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
