// A real webhook consumer on 127.0.0.1 whose answer is decided asynchronously: it can answer
// slowly, or do something first (stop a database…) and then answer. Records each arrival.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Arrival = { path: string; eventId: string; deliveryHeader: string; at: number };

export async function startAsyncConsumer(answer: (arrival: Arrival, index: number) => Promise<number>) {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string };
      const arrival = { path: req.url ?? "/", eventId: body.id, deliveryHeader: String(req.headers["x-delivery-id"]), at: Date.now() };
      arrivals.push(arrival);
      answer(arrival, arrivals.length - 1).then(
        (status) => res.writeHead(status, { "content-type": "text/plain" }).end(`answer ${status}`),
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    arrivals,
    /** How many times each event arrived. */
    arrivalsPerEvent: () => arrivals.reduce((m, a) => m.set(a.eventId, (m.get(a.eventId) ?? 0) + 1), new Map<string, number>()),
    /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
    async waitFor(count: number, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.length < count) {
        if (Date.now() > deadline) throw new Error(`consumer got ${arrivals.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
