// A fake CRM on 127.0.0.1 that records every request it receives and answers as told.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

type Received = { method: string; path: string; headers: IncomingHttpHeaders; body: any };
export type Behaviour =
  | { kind: "json"; status: number; body: unknown }
  | { kind: "text"; status: number; body: string }
  /** Accepts the request and never answers (a timeout). */
  | { kind: "hang" };

export type FakeCrm = {
  url: string;
  received: Received[];
  respond: (b: Behaviour) => void;
  close: () => Promise<void>;
};

export async function startFakeCrm(initial: Behaviour): Promise<FakeCrm> {
  let behaviour = initial;
  const received: Received[] = [];
  const hanging = new Set<import("node:http").ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep the text */
      }
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      if (behaviour.kind === "hang") {
        hanging.add(res);
        return;
      }
      const payload = behaviour.kind === "json" ? JSON.stringify(behaviour.body) : behaviour.body;
      res.writeHead(behaviour.status, { "content-type": behaviour.kind === "json" ? "application/json" : "text/plain" });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    respond: (b) => {
      behaviour = b;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
