// A real webhook consumer on 127.0.0.1: records every request (raw body bytes, headers, arrival
// time) and answers as the test says: a status code (with headers, e.g. a 429's Retry-After), a
// hang, or a connection reset.
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export type Received = { path: string; headers: http.IncomingHttpHeaders; raw: Buffer; body: any; at: number };
/** An answer: a status, or one with headers (answered `delayMs` after the request arrived), a hang, or a reset. */
export type Behaviour = number | { status: number; headers: Record<string, string>; delayMs?: number } | "hang" | "reset";

export async function startConsumer(initial: Behaviour | ((req: Received, index: number) => Behaviour) = 200) {
  const received: Received[] = [];
  let behaviour = initial;
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  // Requests open at once (arrived, not yet answered or abandoned by the sender), and the most ever.
  const open = { now: 0, most: 0 };
  const server = http.createServer((req, res) => {
    open.now++;
    open.most = Math.max(open.most, open.now);
    res.once("close", () => open.now--);
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
      for (const w of [...waiters])
        if (received.length >= w.count) {
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
      const status = typeof answer === "number" ? answer : answer.status;
      const headers = typeof answer === "number" ? {} : answer.headers;
      const respond = () => void res.writeHead(status, { "content-type": "text/plain", ...headers }).end(`answer ${status}`);
      const delayMs = typeof answer === "number" ? 0 : (answer.delayMs ?? 0);
      if (delayMs > 0) setTimeout(respond, delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    /** Requests open right now and the most open at once so far. */
    open: open as Readonly<typeof open>,
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

export type Arrival = { id: string; at: number };

/**
 * A consumer in a child process (tests/helpers/counting-consumer-process.ts) that answers 200 and
 * notes each arrival's time on its own clock: for timing assertions a busy test process would skew.
 */
export async function startCountingConsumerProcess() {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve(__dirname, "counting-consumer-process.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`consumer process exited with ${code}`)));
  });
  const arrivals = async (): Promise<Arrival[]> => (await fetch(`http://127.0.0.1:${port}/arrivals`)).json() as Promise<Arrival[]>;
  return {
    url: (p = "/hook") => `http://127.0.0.1:${port}${p}`,
    arrivals,
    /** Resolves with the arrivals once there are `count` (rejects after `timeoutMs`). */
    waitFor: (count: number, timeoutMs = 10_000) => eventually(async () => ((list) => list.length >= count && list)(await arrivals()), timeoutMs, 100),
    close: () => void child.kill("SIGKILL"),
  };
}
