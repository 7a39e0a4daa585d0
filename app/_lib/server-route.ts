// The app-router mount of a server handler (under `next start`/`next dev`; `npm start` answers every
// /api path from its own front). The route bundle is then the only copy of the server's modules in
// the process: the first request starts the server process (database, background work) in it, and
// each request is timed and drained as on the lean front (server/http/next-mount.ts).
import { nextRoute } from "@/server/http/next-mount";

/** `route`: the HTTP histogram's route label, unless the handler records its own (the REST bridges). */
export function serverRoute(handle: (req: Request) => Promise<Response>, route?: string | ((req: Request) => string)): (req: Request) => Promise<Response> {
  return nextRoute(handle, route);
}
