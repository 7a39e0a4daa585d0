// A minimal HTTP/1.1 keep-alive client for a bench's load: one request at a time per socket, each
// socket reused, answers read by Content-Length (a chunked answer is an error). The bench's load
// shares the two cores with the server it measures, so what the load costs is taken from the
// server: node:http's client spent 0.11-0.13 ms of CPU per booking in the tools bench, where the
// baseline's raw inserts go through the pg driver with no HTTP at all. Only for benches.
import net from "node:net";

export type Answer = { status: number; text: string };

const HEAD_END = Buffer.from("\r\n\r\n");

/** One keep-alive connection: `send` writes a whole request and resolves with its answer. */
class Connection {
  private readonly socket: net.Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (a: Answer) => void; reject: (e: Error) => void } | null = null;
  broken = false;

  constructor(host: string, port: number) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
      this.read();
    });
    const fail = (err: Error) => {
      this.broken = true;
      this.waiting?.reject(err);
      this.waiting = null;
    };
    this.socket.on("error", fail);
    this.socket.on("close", () => fail(new Error("connection closed")));
  }

  send(request: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  private read() {
    const end = this.buffered.indexOf(HEAD_END);
    if (end < 0 || !this.waiting) return;
    const head = this.buffered.toString("latin1", 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      this.broken = true;
      this.waiting.reject(new Error(`answer without Content-Length: ${head.split("\r\n")[0]}`));
      this.waiting = null;
      this.socket.destroy();
      return;
    }
    const total = end + HEAD_END.length + Number(length[1]);
    if (this.buffered.length < total) return;
    const text = this.buffered.toString("utf8", end + HEAD_END.length, total);
    this.buffered = this.buffered.subarray(total);
    const waiting = this.waiting;
    this.waiting = null;
    waiting.resolve({ status, text });
  }

  close() {
    this.socket.destroy();
  }
}

/** POSTs over a pool of keep-alive connections (one per request in flight), with fixed headers. */
export function keepAliveClient(origin: string, headers: Record<string, string>) {
  const url = new URL(origin);
  const host = url.hostname;
  const port = Number(url.port || 80);
  const fixed = Object.entries({ host: url.host, connection: "keep-alive", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const idle: Connection[] = [];
  const all: Connection[] = [];
  return {
    async post(path: string, body: string): Promise<Answer> {
      let connection = idle.pop();
      if (!connection) all.push((connection = new Connection(host, port)));
      const payload = Buffer.from(body, "utf8");
      const head = Buffer.from(`POST ${path} HTTP/1.1\r\n${fixed}content-length: ${payload.length}\r\n\r\n`, "latin1");
      const answer = await connection.send(Buffer.concat([head, payload]));
      if (!connection.broken) idle.push(connection);
      return answer;
    },
    close() {
      for (const c of all) c.close();
    },
  };
}
