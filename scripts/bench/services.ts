// Throwaway PostgreSQL and Redis for the bench, plus spawning and stopping the servers under test.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import type pg from "pg";
import path from "node:path";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const PG_USER = "pgbench2";

/** initdb + postgres on a free port as an unprivileged user (the server refuses root), fsync off. */
export async function startThrowawayPostgres(): Promise<{ url: string; pid: () => number; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "bench-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    spawnSync("useradd", ["-m", PG_USER], { stdio: "ignore" }); // exists already: fine
    chmodSync(dir, 0o777);
  }
  const run = (cmd: string, args: string[]) => {
    const r = asRoot ? spawnSync("runuser", ["-u", PG_USER, "--", cmd, ...args], { encoding: "utf8" }) : spawnSync(cmd, args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  const data = path.join(dir, "data");
  run("initdb", ["--no-sync", "-A", "trust", "-U", "postgres", "-D", data]);
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    path.join(dir, "log"),
    "-w",
    "start",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=256MB`,
  ]);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    /** The postmaster; the backends serving connections are its children. */
    pid: () => Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    stop: async () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export async function startThrowawayRedis(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const deadline = Date.now() + 5000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      proc.kill("SIGKILL");
    },
  };
}

export type Running = { name: string; url: string; proc: ChildProcess; output: () => string; stop: () => Promise<void> };

/**
 * Spawns a server and waits until `readyPath` answers (any HTTP status; by default `/healthz`, as a
 * load balancer would: a request for a page would load Next into the lean front, whose global patches
 * (its `Date` wrapper, `setImmediate` tracking) an API-only process never has).
 */
export async function spawnServer(
  name: string,
  args: string[],
  opts: { port: number; env: Record<string, string | undefined>; readyPath?: string; timeoutMs?: number; cwd: string },
): Promise<Running> {
  const url = `http://127.0.0.1:${opts.port}`;
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env, PORT: String(opts.port), HOST: "127.0.0.1" } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out = (out + d).slice(-20_000)));
  proc.stderr!.on("data", (d) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited during startup:\n${out}`);
    try {
      await fetch(url + (opts.readyPath ?? "/healthz"), { signal: AbortSignal.timeout(5000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`${name} did not answer within ${opts.timeoutMs ?? 90_000} ms:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    name,
    url,
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** CPU time (user + system, ms) used so far by a process and all its descendants (Linux /proc). */
export function processTreeCpuMs(pid: number): number {
  let ticks = 0;
  const visit = (p: number) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]); // utime stime cutime cstime
      for (const task of readdirSync(`/proc/${p}/task`)) {
        for (const child of readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) visit(Number(child));
      }
    } catch {
      // the process ended meanwhile
    }
  };
  visit(pid);
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** CPU ms (user + system) so far of each client backend connected to the bench's database (null where /proc cannot tell); not autovacuum, whose runs after a part's deletes would land in whichever slice they fall. */
export async function backendsCpu(pool: pg.Pool): Promise<Map<number, number> | null> {
  const { rows } = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      return null; // another machine, or another user's processes
    }
  }
  return cpu;
}

/** CPU ms the backends used between two readings (a backend that appeared meanwhile counts whole). */
export function backendsCpuDelta(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}
