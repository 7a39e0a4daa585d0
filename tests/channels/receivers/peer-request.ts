// One HTTP request to a test server from a chosen peer: an http.Agent bound to a loopback address
// of the test's own (its localAddress), so the server's per-IP limit sees that address.
import { type Agent, request } from "node:http";

export type PeerAnswer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

export function sendFrom(
  server: { url: string },
  peer: Agent,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PeerAnswer> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? "POST", agent: peer, headers: opts.headers },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
