// A server on the embedded database takes operator CLI commands on a local socket: PGlite allows
// one process per database, so a CLI started beside `npm start` sends its command here and the
// server runs it (the same table, the same code, its open database) and answers what the command
// printed and its exit code. The socket is a Unix domain socket in DATA_DIR, readable and writable
// by this user only (mode 0600: the same trust as opening the data directory itself), recorded in
// the embedded database's lock file (server/db/embedded-lock.ts) for the CLI to find.
import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { dataDir, databaseKind } from "../db/client";
import { recordOperatorSocket } from "../db/embedded-lock";
import { log } from "../lib/log";
import { executeCommand } from "./run-cli";

/** A command line is small: anything longer is refused unread. */
const MAX_REQUEST_BYTES = 64 * 1024;

let server: Server | undefined;

const operatorSocketPath = () => path.join(dataDir(), "cli.sock");

/** Starts taking commands (the embedded database only: on PostgreSQL a CLI opens the database itself). */
export async function startOperatorSocket(): Promise<void> {
  if (databaseKind() !== "pglite" || server) return;
  const socketPath = operatorSocketPath();
  rmSync(socketPath, { force: true }); // left by a process that was killed
  const listening = createServer({ allowHalfOpen: true }, (conn) => {
    const chunks: Buffer[] = [];
    let size = 0;
    conn.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) conn.destroy();
      else chunks.push(chunk);
    });
    conn.on("error", () => {});
    conn.on("end", async () => {
      let outcome: Awaited<ReturnType<typeof executeCommand>>;
      try {
        const { positionals, flags } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (!Array.isArray(positionals) || typeof flags !== "object" || flags === null) throw new Error("malformed request");
        log.info({ command: positionals.slice(0, 2).join(" ") }, "operator command");
        outcome = await executeCommand(positionals.map(String), flags);
      } catch (err) {
        outcome = { code: 1, stdout: "", stderr: `error: failed: ${(err as Error).message}\n` };
      }
      conn.end(JSON.stringify(outcome));
    });
  });
  await new Promise<void>((resolve, reject) => {
    listening.once("error", reject);
    listening.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  listening.unref(); // never what keeps the process alive
  server = listening;
  recordOperatorSocket(dataDir(), socketPath);
}

/** Stops taking commands (at shutdown, before the database closes). */
export async function stopOperatorSocket(): Promise<void> {
  const closing = server;
  server = undefined;
  if (!closing) return;
  recordOperatorSocket(dataDir(), null);
  await new Promise<void>((resolve) => closing.close(() => resolve()));
  rmSync(operatorSocketPath(), { force: true });
}
