// A PgBouncer of a test's own in transaction mode on 127.0.0.1, in front of a PostgreSQL server:
// every database name is routed to it (`*` in [databases]), as with the per-file test databases.
// PgBouncer refuses to run as root, so as root it runs as the unprivileged user that
// scripts/services.sh and postgres-server.ts use for PostgreSQL (tdptest).
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../scripts/bench/services";

const PG_USER = process.env.PG_USER_NAME ?? "tdptest";
const BINARY = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p) => existsSync(p)) ?? "pgbouncer";

export const hasPgbouncer = () => BINARY !== "pgbouncer" || !!process.env.PATH?.split(":").some((d) => existsSync(path.join(d, "pgbouncer")));

export type Pgbouncer = { port: number; url: (direct: string) => string; log: () => string; stop: () => Promise<void> };

/** Starts PgBouncer in transaction mode in front of the server `directUrl` points at; resolves once it accepts connections. */
export async function startPgbouncer(directUrl: string, opts: { poolSize?: number; queryWaitTimeoutSeconds?: number } = {}): Promise<Pgbouncer> {
  const server = new URL(directUrl);
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "tdp-pgbouncer-"));
  const user = decodeURIComponent(server.username || "postgres");
  writeFileSync(path.join(dir, "users.txt"), `"${user}" ""\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      `default_pool_size = ${opts.poolSize ?? 20}`,
      `query_wait_timeout = ${opts.queryWaitTimeoutSeconds ?? 120}`,
      // node-postgres and postgres.js send these at startup; PgBouncer refuses unknown ones
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chmodSync(dir, 0o777);
  const [file, args] = asRoot ? ["runuser", ["-u", PG_USER, "--", BINARY, path.join(dir, "pgbouncer.ini")]] : [BINARY, [path.join(dir, "pgbouncer.ini")]];
  const proc: ChildProcess = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out = (out + d).slice(-20_000)));
  proc.stderr!.on("data", (d) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM"); // runuser passes it on; PgBouncer shuts down at once on SIGTERM
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    /** `direct` (a URL on the same server, any database) through this PgBouncer. */
    url: (direct: string) => {
      const u = new URL(direct);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    log: () => out,
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => {
      s.end();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}
