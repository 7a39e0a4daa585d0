// The CLI's side of the operator socket (operator-socket.ts): one request, one answer.
import { connect } from "node:net";
import type { Flags } from "../lib/cli";

type Outcome = { code: number; stdout: string; stderr: string };

/**
 * Sends a command to the server listening on `socket` and resolves its outcome; null when nothing
 * answers there (the server is stopping, or the socket is stale), so the caller runs it itself.
 */
export function sendToOperatorSocket(socket: string, command: { positionals: string[]; flags: Flags }): Promise<Outcome | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let connected = false;
    const conn = connect(socket);
    conn.on("connect", () => {
      connected = true;
      conn.end(`${JSON.stringify(command)}\n`);
    });
    conn.on("data", (chunk: Buffer) => chunks.push(chunk));
    conn.on("error", (err) => {
      if (!connected) return resolve(null);
      resolve({ code: 1, stdout: "", stderr: `error: failed: the running server's operator socket broke off (${err.message})\n` });
    });
    conn.on("close", () => {
      if (!connected) return resolve(null);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Outcome);
      } catch {
        resolve({ code: 1, stdout: "", stderr: "error: failed: the running server closed the operator socket without an answer\n" });
      }
    });
  });
}
