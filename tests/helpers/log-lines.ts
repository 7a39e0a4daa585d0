// This process's log lines, read in-process: server/lib/log.ts's destination pointed at a collector
// (setLogDestination) for the test's duration, then back at stdout. A spawned process's lines are
// read from its stdout (the CLI's from its stderr) instead.
import { setLogDestination } from "../../server/lib/log";

export type LogLine = Record<string, unknown> & { level: string; msg: string };

/** The lines written since `captureLogLines()`, parsed, in order. */
export class LogLines {
  readonly all: LogLine[] = [];
  /** The lines as written (JSON text, each ending in a newline). */
  readonly raw: string[] = [];
  /** pino writes one whole line per call. */
  write(line: string): void {
    this.raw.push(line);
    this.all.push(JSON.parse(line) as LogLine);
  }
  at(level: string): LogLine[] {
    return this.all.filter((l) => l.level === level);
  }
  withMsg(msg: string): LogLine[] {
    return this.all.filter((l) => l.msg === msg);
  }
}

/** Starts collecting the process's log lines (call `releaseLogLines()` after, e.g. in afterEach). */
export function captureLogLines(): LogLines {
  const lines = new LogLines();
  setLogDestination(lines);
  return lines;
}

/** Lines go to stdout again. */
export function releaseLogLines(): void {
  setLogDestination(1);
}
