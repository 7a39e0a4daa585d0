// The receivers' server for the ingest bench: the production lean front (createLeanServer, which
// answers /api/webhooks itself) without Next (no build needed; any other path is a 404).
// `node --import tsx scripts/bench/ingest-server.ts`, HOST / PORT as the lean front.
import { createLeanServer } from "../../server/http/lean-server";
import { closeServerProcess, startServerProcess, stopBackgroundWork } from "../../server/http/startup";

const hostname = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);

await startServerProcess();
const server = createLeanServer({ next: (_req, res) => void res.writeHead(404).end(), origin: `http://${hostname}:${port}` });
server.keepAliveTimeout = 65_000;
server.listen(port, hostname, () => console.log(`Ready on http://${hostname}:${port}`));
// A clean exit lets --cpu-prof write its profile.
process.once("SIGTERM", async () => {
  server.close();
  server.closeAllConnections();
  await stopBackgroundWork(Date.now() + 2_000).catch(() => {});
  await closeServerProcess().catch(() => {});
  process.exit(0);
});
