// A throwaway PostgreSQL cluster of a test's own, on 127.0.0.1, that the test can stop, start again
// (same port and data) and pause, for outage experiments. PostgreSQL refuses to run as root, so
// as root the cluster runs as the unprivileged user scripts/services.sh uses (tdptest).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { freePort } from "../../scripts/bench/services";
import { applyMigrations } from "../../server/db/schema-engine";

const PG_USER = process.env.PG_USER_NAME ?? "tdptest";
const asRoot = () => process.getuid?.() === 0;

/** Runs a PostgreSQL binary (as the unprivileged user under root) without blocking the event loop. */
function run(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot() ? ["runuser", ["-u", PG_USER, "--", cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} failed (${code}): ${out}`))));
  });
}

async function ensureUser(): Promise<void> {
  if (!asRoot()) return;
  await new Promise<void>((resolve) => {
    // Exists already: useradd fails, which is fine.
    spawn("useradd", ["--system", "--no-create-home", PG_USER], { stdio: "ignore" }).once("exit", () => resolve());
  });
}

export class PostgresServer {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get data(): string {
    return path.join(this.dir, "data");
  }

  /** initdb, start, and (by default) apply the migrations. */
  static async start(opts: { migrate?: boolean } = {}): Promise<PostgresServer> {
    await ensureUser();
    const dir = mkdtempSync(path.join(tmpdir(), "tdp-pg-"));
    if (asRoot()) chmodSync(dir, 0o777);
    const server = new PostgresServer(await freePort(), dir);
    await run("initdb", ["--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8", "-D", server.data]);
    await server.resume();
    if (opts.migrate ?? true) await applyMigrations(new PrismaPg({ connectionString: server.url, max: 1 }));
    return server;
  }

  /** Starts the stopped server again, on the same port and data; resolves once it accepts connections. */
  async resume(): Promise<void> {
    await run("pg_ctl", [
      "-D",
      this.data,
      "-l",
      path.join(this.dir, "server.log"),
      "-w",
      "start",
      "-o",
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
    ]);
  }

  /** Stops the server (`fast`: sessions are terminated, as in an operator's restart). */
  async halt(mode: "fast" | "immediate" = "fast"): Promise<void> {
    await run("pg_ctl", ["-D", this.data, "-m", mode, "-w", "stop"]);
  }

  /**
   * Pauses (SIGSTOP) or continues (SIGCONT) the server and every backend: connections stay open and
   * nothing answers, as when a host freezes or a process is stalled.
   */
  signalAll(signal: "SIGSTOP" | "SIGCONT"): void {
    const postmaster = Number(readFileSync(path.join(this.data, "postmaster.pid"), "utf8").split("\n")[0]);
    const children = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return Number(readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]?.split(" ")[1]) === postmaster;
        } catch {
          return false; // exited meanwhile
        }
      })
      .map(Number);
    for (const pid of [postmaster, ...children]) {
      try {
        process.kill(pid, signal);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err; // a backend that ended meanwhile
      }
    }
  }

  /** Runs one statement on a connection of its own. */
  async query<Row = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Row[];
    } finally {
      await client.end();
    }
  }

  /** Stops the server at once and deletes its files. */
  async destroy(): Promise<void> {
    await this.halt("immediate").catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Runs `fn` with this test process's database client on `url` (e.g. to set up rows on a cluster of
 * the test's own), then puts the process back on its own database.
 */
export async function onDatabase<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const { closeDatabase } = await import("../../server/db/database");
  const own = process.env.DATABASE_URL;
  const ownDirect = process.env.DIRECT_DATABASE_URL;
  await closeDatabase();
  process.env.DATABASE_URL = url;
  delete process.env.DIRECT_DATABASE_URL; // the suite's may name a pooler's server (TEST_POOLER)
  try {
    return await fn();
  } finally {
    await closeDatabase();
    process.env.DATABASE_URL = own;
    if (ownDirect !== undefined) process.env.DIRECT_DATABASE_URL = ownDirect;
  }
}

/**
 * For a test whose own process works on a cluster of its own (its worker, its rows): starts the
 * cluster and moves this process's database client onto it. `restore()` moves the client back
 * and deletes the cluster.
 */
export async function moveToOwnCluster(): Promise<{ cluster: PostgresServer; restore: () => Promise<void> }> {
  const { closeDatabase } = await import("../../server/db/database");
  const cluster = await PostgresServer.start();
  const own = process.env.DATABASE_URL;
  const ownDirect = process.env.DIRECT_DATABASE_URL;
  await closeDatabase();
  process.env.DATABASE_URL = cluster.url;
  delete process.env.DIRECT_DATABASE_URL;
  return {
    cluster,
    restore: async () => {
      await closeDatabase();
      process.env.DATABASE_URL = own;
      if (ownDirect !== undefined) process.env.DIRECT_DATABASE_URL = ownDirect;
      await cluster.destroy();
    },
  };
}
