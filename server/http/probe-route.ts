// The probes' Next mount (app/healthz, app/readyz): apart from probes.ts, because it starts the server
// process (startup.ts), which itself registers its webhook engine with probes.ts.
import { probeAnswer } from "./probes";
import { takeOverShutdownSignals } from "./next-mount";
import { startServerProcess } from "./startup";

/** The Next route files' mount (app/healthz, app/readyz). /readyz first starts the server process there, as any API route does. */
export async function handleProbeRequest(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (path === "/readyz") {
    await startServerProcess().catch(() => {}); // a failed start shows as its failing checks
    takeOverShutdownSignals(); // the load balancer polls it: SIGTERM then drains (next-mount.ts)
  }
  const answered = await probeAnswer(path, req.method);
  return new Response(req.method === "HEAD" ? null : answered.body, { status: answered.status, headers: answered.headers });
}
