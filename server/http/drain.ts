// Closing the HTTP server without dropping what it serves (SIGTERM): stop accepting connections,
// let every request already received get its real answer, tell keep-alive clients the connection
// ends (`Connection: close` on every response from then on), close connections as they go idle,
// and cut what is left only at a deadline.
import type { IncomingMessage, Server, ServerResponse } from "node:http";

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
  const endKeepAlive = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader("connection", "close");
  };
  // Before the app's own listener, so the header is set before any handler can write.
  server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) endKeepAlive(res);
    inProgress.add(res);
    res.once("close", () => {
      inProgress.delete(res);
      // A response that had already promised keep-alive leaves its connection idle: close it.
      if (draining) setImmediate(() => server.closeIdleConnections());
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
        // Stops listening (new connections are refused) and closes the idle connections now.
        server.close(() => {
          clearTimeout(cut);
          resolve(true);
        });
      });
    },
  };
}
