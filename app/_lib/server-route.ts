// The app-router mount of a server handler (under `next start`/`next dev`; `npm start` answers every
// /api path from its own front). The route bundle is then the only copy of the server's modules in
// the process: the first request starts the server process (database, background work) in it.
import { startServerProcess } from "@/server/http/startup";

export function serverRoute(handle: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
  return async (req) => {
    await startServerProcess();
    return handle(req);
  };
}
