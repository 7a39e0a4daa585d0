// PGlite allows one process per data directory, and two would corrupt it. A lock file holding the
// owner's pid makes a second opener fail with a clear instruction instead. A lock whose process is
// gone (a crash, kill -9) is taken over.
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

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${dir} is in use by process ${pid} (probably \`npm start\` or another CLI command). ` +
        `PGlite allows one process at a time: stop that process and run this again, ` +
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
      const owner = Number(readFileSync(file, "utf8").trim());
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
    if (Number(readFileSync(lockPath(dir), "utf8").trim()) === process.pid) rmSync(lockPath(dir), { force: true });
  } catch {
    // already gone
  }
}
