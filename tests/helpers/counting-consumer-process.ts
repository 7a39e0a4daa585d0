// A webhook consumer in a process of its own (so a busy test process — PGlite runs on its event
// loop — cannot delay its clock): answers every POST 200 and notes when it arrived and its event
// id; `GET /arrivals` returns them in arrival order. Prints its port once listening.
import http from "node:http";
import type { AddressInfo } from "node:net";

const arrivals: { id: string; at: number }[] = [];
const server = http.createServer((req, res) => {
  if (req.method === "GET") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(arrivals));
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = Date.now();
    arrivals.push({ id: (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string }).id, at });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`port ${(server.address() as AddressInfo).port}\n`));
