// PGlite allows one process per data directory, and two would corrupt it. A lock file holding the
// owner's pid makes a second opener fail with a clear instruction instead. A lock whose process is
// gone (a crash, kill -9) is taken over. A running server also records there the local socket on
// which it takes operator CLI commands (server/cli/operator-socket.ts), so a CLI started beside it
// runs its command in the server instead of opening the database a second time.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const lockPath = (dir: string) => path.join(dir, "pglite.lock");

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The lock's text: the owner's pid, then (a running server's) `socket <path>`. */
export type EmbeddedLock = { pid: number; socket: string | null };

function parseLock(text: string): EmbeddedLock {
  const [first = "", ...rest] = text.split("\n");
  const socketLine = rest.find((line) => line.startsWith("socket "));
  return { pid: Number(first.trim()), socket: socketLine ? socketLine.slice("socket ".length).trim() : null };
}

function readLock(dir: string): EmbeddedLock | null {
  try {
    return parseLock(readFileSync(lockPath(dir), "utf8"));
  } catch {
    return null;
  }
}

/** The live process other than this one that holds the embedded database of `dir`, if any. */
export function embeddedLockHolder(dir: string): EmbeddedLock | null {
  const lock = readLock(dir);
  return lock && lock.pid && lock.pid !== process.pid && processAlive(lock.pid) ? lock : null;
}

/** Records (or, with null, removes) the operator socket of this process in the lock it holds. */
export function recordOperatorSocket(dir: string, socket: string | null): void {
  if (!held.has(dir) || readLock(dir)?.pid !== process.pid) return;
  writeFileSync(lockPath(dir), socket ? `${process.pid}\nsocket ${socket}\n` : String(process.pid));
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${dir} is in use by process ${pid}, which does not take CLI commands (another CLI command, or a server started without \`npm start\`). ` +
        `PGlite allows one process at a time: wait for that process or stop it and run this again; ` +
        `a server started with \`npm start\` runs CLI commands itself; ` +
        `or set DATABASE_URL to a PostgreSQL server so several processes can share it.`,
    );
    this.name = "EmbeddedDatabaseBusyError";
  }
}

/** The directories whose lock this process holds, released by one exit hook (not one per opening). */
const held = new Set<string>();
let exitHooked = false;

export function acquireEmbeddedLock(dir: string): void {
  const file = lockPath(dir);
  for (let i = 0; i < 2; i++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      held.add(dir);
      if (!exitHooked) {
        exitHooked = true;
        process.once("exit", () => {
          for (const d of held) releaseEmbeddedLock(d);
        });
      }
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = parseLock(readFileSync(file, "utf8")).pid;
      if (owner === process.pid) return;
      if (owner && processAlive(owner)) throw new EmbeddedDatabaseBusyError(dir, owner);
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not take the embedded database lock ${file}`);
}

export function releaseEmbeddedLock(dir: string): void {
  held.delete(dir);
  try {
    if (readLock(dir)?.pid === process.pid) rmSync(lockPath(dir), { force: true });
  } catch {
    // already gone
  }
}
