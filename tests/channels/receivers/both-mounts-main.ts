// One server process with both mounts of the receivers, on one database (the embedded one allows a
// single process): on PORT the production lean front (createLeanServer, which answers /api/webhooks
// straight from node:http), and on ROUTE_FILE_PORT the receivers' app-router route file mounted the
// way Next mounts it (the address the lean front resolved in X-Forwarded-For, a Fetch Request in,
// the route's method handler, a Fetch Response out). Anything else is 404.
// `node --import tsx tests/channels/receivers/both-mounts-main.ts`, HOST / PORT / ROUTE_FILE_PORT.
import { createServer } from "node:http";
import { createLeanServer } from "../../../server/http/lean-server";
import { forwardResolvedClientIp } from "../../../server/lib/client-ip";
import { sendFetchResponse, toFetchRequest } from "../../../server/http/fetch-bridge";
import { closeServerProcess, startServerProcess, stopBackgroundWork } from "../../../server/http/startup";
import * as webhooksRoute from "../../../app/api/webhooks/[...path]/route";

const hostname = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);
const routeFilePort = Number(process.env.ROUTE_FILE_PORT);
const routeMethods = webhooksRoute as unknown as Record<string, ((req: Request) => Promise<Response>) | undefined>;

await startServerProcess();
const routeFile = createServer((req, res) => {
  const handler = req.url?.startsWith("/api/webhooks/") ? routeMethods[req.method ?? "GET"] : undefined;
  if (!handler) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    return;
  }
  forwardResolvedClientIp(req);
  void handler(toFetchRequest(req, res, `http://${hostname}:${routeFilePort}`)).then((response) => sendFetchResponse(res, response));
});
await new Promise<void>((resolve) => routeFile.listen(routeFilePort, hostname, resolve));
const lean = createLeanServer({
  next: (_req, res) => void res.writeHead(404, { "content-type": "text/plain" }).end("not found"),
  origin: `http://${hostname}:${port}`,
});
lean.listen(port, hostname, () => console.log(`Ready on http://${hostname}:${port}`));
process.once("SIGTERM", async () => {
  for (const server of [lean, routeFile]) {
    server.close();
    server.closeAllConnections();
  }
  await stopBackgroundWork(Date.now() + 2_000).catch(() => {});
  await closeServerProcess().catch(() => {});
  process.exit(0);
});
