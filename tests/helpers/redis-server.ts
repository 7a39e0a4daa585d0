// Spawns a throwaway redis-server on 127.0.0.1 for tests, and can kill, restart (same port) and
// pause it. No persistence, so a restart comes back empty.
import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "../../scripts/bench/services";

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server";

async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === "PONG") return;
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export class RedisServer {
  private proc: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  /** (Re)starts the server on the same port. */
  async restart(): Promise<void> {
    if (this.proc) throw new Error("redis-server is already running");
    const proc = spawn(REDIS_SERVER, ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"], {
      stdio: "ignore",
    });
    this.proc = proc;
    proc.once("exit", () => {
      if (this.proc === proc) this.proc = null;
    });
    await waitForPing(this.port, 5000);
  }

  /** SIGKILLs the server and waits for it to be gone. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
    this.proc = null;
  }

  /** SIGSTOP: the server stops running (commands wait in its sockets) until thaw(). */
  freeze(): void {
    this.proc?.kill("SIGSTOP");
  }

  /** SIGCONT: the server runs again and answers what waited. */
  thaw(): void {
    this.proc?.kill("SIGCONT");
  }

  /** CLIENT PAUSE: the server holds every client's commands for `ms` milliseconds. */
  async pause(ms: number): Promise<void> {
    await this.command("CLIENT", "PAUSE", String(ms), "ALL");
  }

  async command(...args: string[]): Promise<unknown> {
    const admin = new Redis({ port: this.port, host: "127.0.0.1", maxRetriesPerRequest: 0 });
    try {
      return await admin.call(args[0]!, ...args.slice(1));
    } finally {
      admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}
