// A production-like front for the receiver tests while the Next build predates the receivers: the
// lean front's own server (createLeanServer: /api/v1 and /api/trpc as in production) with Next's
// place taken by the receivers' app-router route file itself, mounted as Next mounts it (a Fetch
// Request in, the route's exported method handler, a Fetch Response out). Everything else is 404.
// `node --import tsx tests/helpers/receiver-front-main.ts`, HOST / PORT as the lean front.
import { createLeanServer, type NodeHandler } from "../../server/http/lean-server";
import { sendFetchResponse, toFetchRequest } from "../../server/http/fetch-bridge";
import { closeServerProcess, startServerProcess, stopBackgroundWork } from "../../server/http/startup";
import * as webhooksRoute from "../../app/api/webhooks/[...path]/route";

const hostname = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);
const origin = `http://${hostname}:${port}`;
const routeMethods = webhooksRoute as unknown as Record<string, ((req: Request) => Promise<Response>) | undefined>;

const nextStandIn: NodeHandler = async (req, res) => {
  const handler = req.url?.startsWith("/api/webhooks/") ? routeMethods[req.method ?? "GET"] : undefined;
  if (!handler) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    return;
  }
  await sendFetchResponse(res, await handler(toFetchRequest(req, res, origin)));
};

await startServerProcess();
const server = createLeanServer({ next: nextStandIn, origin });
server.listen(port, hostname, () => console.log(`Ready on ${origin}`));
process.once("SIGTERM", async () => {
  server.close();
  server.closeAllConnections();
  await stopBackgroundWork(Date.now() + 2_000).catch(() => {});
  await closeServerProcess().catch(() => {});
  process.exit(0);
});
