// Closing the HTTP server without dropping what it serves (SIGTERM): stop accepting connections,
// let every request already received get its real answer, tell keep-alive clients the connection
// ends (`Connection: close` on every response from then on), close connections as they go idle,
// and cut what is left only at a deadline.
//
// Idle keep-alive connections are not closed at the signal but after IDLE_GRACE_MS: a client may
// have sent a request on one an instant before (its bytes still on the wire), and closing the
// socket then resets that request unanswered (the client cannot tell whether it ran). Within the
// grace such a request is answered, with `Connection: close`.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";

/** How long idle keep-alive connections stay open after the drain starts (at most the drain's timeout). */
const IDLE_GRACE_MS = 1_000;

export type Drainable = {
  /**
   * Starts the drain. Resolves true once every connection has ended, or false when `timeoutMs`
   * passed first (the connections left are then closed).
   */
  drain(timeoutMs: number): Promise<boolean>;
};

/** Tracks the server's responses in progress; call right after creating the server. */
export function drainable(server: Server): Drainable {
  const inProgress = new Set<ServerResponse>();
  let draining = false;
  let idleClosing = false;
  const endKeepAlive = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader("connection", "close");
  };
  // Before the app's own listener, so the header is set before any handler can write.
  server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) endKeepAlive(res);
    inProgress.add(res);
    res.once("close", () => {
      inProgress.delete(res);
      // A response that had already promised keep-alive leaves its connection idle: close it (after the grace).
      if (idleClosing) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    drain(timeoutMs) {
      draining = true;
      for (const res of inProgress) endKeepAlive(res);
      return new Promise((resolve) => {
        const cut = setTimeout(() => {
          server.closeAllConnections();
          resolve(false);
        }, timeoutMs);
        // Stops listening (new connections are refused). Not http's own close(), which also closes
        // the idle connections at once; they are closed after the grace.
        NetServer.prototype.close.call(server, () => {
          clearTimeout(cut);
          clearTimeout(grace);
          resolve(true);
        });
        const grace = setTimeout(
          () => {
            idleClosing = true;
            server.closeIdleConnections();
          },
          Math.min(IDLE_GRACE_MS, timeoutMs),
        );
      });
    },
  };
}
