// One POST to a tenant-set URL (a webhook target, a CRM): the socket connects only to addresses
// that pass the target rules (the check runs in the connection's own DNS lookup, so a name that
// changes its answer between a check and the connection cannot slip through), no redirects are
// followed, and one overall timeout bounds it. Never throws: failures come back as `error`.
import http from "node:http";
import https from "node:https";
import { guardedLookup, refusedLiteralHostReason } from "./target-url";

/**
 * How long a pooled connection may sit idle before we close it: under the keep-alive timeout of
 * common receivers (Node's default is 5 s), so we close first instead of writing onto a connection
 * the receiver is closing. A receiver that announces a shorter `Keep-Alive: timeout=` is honoured.
 */
export const IDLE_SOCKET_TIMEOUT_MS = 4_000;

// Keep-alive pools: most tenants have few targets, and a reused TLS connection saves a handshake.
const agentOptions = { keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_TIMEOUT_MS, lookup: guardedLookup };
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

export type GuardedPostResult =
  | { ok: true; statusCode: number; body: string /** the answer's `Retry-After` header, if any */; retryAfter: string | null }
  | { ok: false; reason: "refused" | "timeout" | "network"; error: string };

function describeError(err: NodeJS.ErrnoException): string {
  if (err.name === "RefusedTargetError") return err.message;
  if (err.code) return `network error: ${err.code}${err.message && !err.message.includes(err.code) ? ` (${err.message})` : ""}`;
  return `network error: ${err.message}`;
}

/**
 * POSTs `body`. The answer's first `keepBytes` bytes are kept; past `maxBytes` the response is cut
 * off (what was kept is still returned with its status).
 */
export function guardedPost(
  url: URL,
  opts: {
    headers: Record<string, string>;
    body: Buffer;
    timeoutMs: number;
    keepBytes: number;
    maxBytes: number;
    /** POST unless told otherwise (a CRM connection test reads with GET, sending no body). */
    method?: "GET" | "POST";
    /** Called once the request has been handed to the connection (the webhook rate limit spaces sends by it). */
    onWritten?: () => void;
  },
): Promise<GuardedPostResult> {
  // An address literal never goes through a DNS lookup: judge it here.
  const refused = refusedLiteralHostReason(url.hostname);
  if (refused) return Promise.resolve({ ok: false, reason: "refused", error: `refused target: ${refused}` });

  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: GuardedPostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const fail = (err: NodeJS.ErrnoException) =>
      finish({ ok: false, reason: err.name === "RefusedTargetError" ? "refused" : "network", error: describeError(err) });
    let req = send(url, opts, finish, (err, answered) => {
      // A pooled connection the receiver closed just as we wrote on it fails before any answer: the
      // receiver never read the request, so it goes once more on a fresh connection (Node's documented pattern).
      if (!answered && !settled && req.reusedSocket && err.code === "ECONNRESET") req = send(url, opts, finish, fail);
      else fail(err);
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, reason: "timeout", error: `timeout: no complete response within ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);
  });
}

type PostOptions = Parameters<typeof guardedPost>[1];

/** One request on a pooled (or new) connection; `onError` hears its failures, and whether an answer had begun. */
function send(
  url: URL,
  opts: PostOptions,
  finish: (r: GuardedPostResult) => void,
  onError: (err: NodeJS.ErrnoException, answered: boolean) => void,
): http.ClientRequest {
  const secure = url.protocol === "https:";
  const method = opts.method ?? "POST";
  const headers = method === "GET" ? opts.headers : { ...opts.headers, "content-length": String(opts.body.length) };
  const req = (secure ? https : http).request(url, { method, headers, agent: secure ? agents.https : agents.http }, (res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (chunk: Buffer) => {
      if (size < opts.keepBytes) chunks.push(chunk);
      size += chunk.length;
      if (size > opts.maxBytes) res.destroy();
    });
    const retryAfter = typeof res.headers["retry-after"] === "string" ? res.headers["retry-after"] : null;
    const complete = () =>
      finish({ ok: true, statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, opts.keepBytes).toString("utf8"), retryAfter });
    res.on("end", complete);
    res.on("close", complete);
    res.on("error", complete);
  });
  let answered = false;
  req.once("response", () => (answered = true));
  req.on("error", (err: NodeJS.ErrnoException) => onError(err, answered));
  if (method === "GET") req.end();
  else req.end(opts.body, () => opts.onWritten?.());
  return req;
}
