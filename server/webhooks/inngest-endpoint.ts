// Where Inngest is told to call this deployment back, and what `/api/inngest` answers when it cannot
// serve. The URL comes from configuration only: Inngest's SDK would otherwise build it from the
// request (its Host), so any PUT from anywhere could re-point Inngest's calls to another host.
import { AppError, errorBody } from "../lib/errors";
import { log } from "../lib/log";
import { inngestDevMode, setting } from "../lib/settings";

type Env = Record<string, string | undefined>;

/** The endpoint's path under the deployment's base URL. */
const INNGEST_PATH = "/api/inngest";

/**
 * The URL registered with Inngest: `INNGEST_SERVE_ORIGIN`, else `PUBLIC_BASE_URL` (with its path
 * prefix), else, for a dev server only, the listen address `http://HOST:PORT`; then
 * `INNGEST_SERVE_PATH`, else `/api/inngest` under the base's path. Null when none is configured
 * (startup refuses that outside dev mode when Inngest is configured: server/lib/settings.ts).
 */
export function inngestServeUrl(env: Env = process.env): URL | null {
  const serveOrigin = setting("INNGEST_SERVE_ORIGIN", env);
  const base = serveOrigin ? new URL(serveOrigin).origin : (setting("PUBLIC_BASE_URL", env) ?? (inngestDevMode(env) ? listenOrigin(env) : null));
  if (!base) return null;
  const baseUrl = new URL(base);
  const path = setting("INNGEST_SERVE_PATH", env) ?? `${baseUrl.pathname.replace(/\/+$/, "")}${INNGEST_PATH}`;
  return new URL(path, baseUrl.origin);
}

/** The lean front's listen address, a wildcard one as loopback (a dev server runs beside the app). */
function listenOrigin(env: Env): string {
  const host = setting("HOST", env);
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${setting("PORT", env)}`;
}

/**
 * The URL this process serves Inngest at, or why it cannot: it needs a dev server or a signing key
 * to check Inngest's calls with (without, Inngest's SDK answers every request 500 and logs a line
 * each time), and a URL to register.
 */
export function inngestServing(env: Env = process.env): { url: URL } | { notServed: string } {
  if (!inngestDevMode(env) && !setting("INNGEST_SIGNING_KEY", env)) return { notServed: "no INNGEST_SIGNING_KEY, and INNGEST_DEV unset" };
  const url = inngestServeUrl(env);
  return url ? { url } : { notServed: "no PUBLIC_BASE_URL or INNGEST_SERVE_ORIGIN to register" };
}

let notConfiguredLogged = false;

/** The answer of `/api/inngest` where Inngest is not served: a 404 in the error envelope, logged once per process. */
export function inngestNotConfigured(reason: string): Response {
  if (!notConfiguredLogged) {
    notConfiguredLogged = true;
    log.warn(`/api/inngest called but Inngest is not configured (${reason}): answering 404; logged once per process`);
  }
  return Response.json(errorBody(new AppError("not_found", "Inngest is not configured on this deployment")), { status: 404 });
}

/**
 * A sync (`PUT`) as the SDK must see it: on the configured URL, with only the `deployId` Inngest
 * passes (any other query would be carried into every registered step URL). Other calls pass as they are.
 */
export function pinSyncRequest(req: Request, served: URL): Request {
  if (req.method !== "PUT") return req;
  const url = new URL(served);
  const deployId = new URL(req.url).searchParams.get("deployId");
  if (deployId !== null) url.searchParams.set("deployId", deployId);
  return new Request(url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal, duplex: "half" } as RequestInit);
}
