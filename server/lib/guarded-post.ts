// One POST to a tenant-set URL (a webhook target, a CRM): the socket connects only to addresses
// that pass the target rules (the check runs in the connection's own DNS lookup, so a name that
// changes its answer between a check and the connection cannot slip through), no redirects are
// followed, and one overall timeout bounds it. Never throws: failures come back as `error`.
import http from "node:http";
import https from "node:https";
import { guardedLookup, loopbackAllowed, refusedLiteralHostReason } from "./target-url";

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
 * The literal check's verdict per host name and loopback setting: it depends on nothing else, and
 * parsing the same few address literals again at every request is wasted work at thousands of
 * deliveries a second. Bounded.
 */
const literalVerdicts = { loopback: new Map<string, string | null>(), strict: new Map<string, string | null>() };
function refusedLiteral(hostname: string): string | null {
  const allowLoopback = loopbackAllowed();
  const known = allowLoopback ? literalVerdicts.loopback : literalVerdicts.strict;
  let verdict = known.get(hostname);
  if (verdict === undefined) {
    if (known.size >= 1000) known.clear();
    verdict = refusedLiteralHostReason(hostname, allowLoopback);
    known.set(hostname, verdict);
  }
  return verdict;
}

/**
 * The request options of a URL (what http.request would derive from it at every call), kept per URL
 * object: the webhook sender passes the same parsed URL for every attempt to a target.
 */
type Target = { secure: boolean; hostname: string; port: string; path: string; host: string };
const targets = new WeakMap<URL, Target>();
function targetOf(url: URL): Target {
  let target = targets.get(url);
  if (!target) {
    // urlToHttpOptions' rules: an IPv6 literal without its brackets; path and query as sent.
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    target = { secure: url.protocol === "https:", hostname, port: url.port, path: `${url.pathname}${url.search}`, host: url.host };
    targets.set(url, target);
  }
  return target;
}

type PostOptions = {
  headers: Record<string, string>;
  /** A string is sent as UTF-8, in one write with the request's head. */
  body: Buffer | string;
  timeoutMs: number;
  keepBytes: number;
  maxBytes: number;
  /** POST unless told otherwise (a CRM connection test reads with GET, sending no body). */
  method?: "GET" | "POST";
  /** Called once the request has been handed to the connection (the webhook rate limit spaces sends by it). */
  onWritten?: () => void;
};

/**
 * POSTs `body`. The answer's first `keepBytes` bytes are kept; past `maxBytes` the response is cut
 * off (what was kept is still returned with its status).
 */
export function guardedPost(url: URL, opts: PostOptions): Promise<GuardedPostResult> {
  const target = targetOf(url);
  // An address literal never goes through a DNS lookup: judge it here.
  const refused = refusedLiteral(target.hostname);
  if (refused) return Promise.resolve({ ok: false, reason: "refused", error: `refused target: ${refused}` });
  return new Promise((resolve) => new Post(target, opts, resolve).start());
}

/**
 * One guarded request and its outcome: state on an object rather than closures made at every call
 * (each its own allocation, thousands a second).
 */
class Post {
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  private req!: http.ClientRequest;
  private retried = false;

  constructor(
    private readonly target: Target,
    private readonly opts: PostOptions,
    private readonly resolve: (r: GuardedPostResult) => void,
  ) {}

  start() {
    this.req = this.send();
    this.timer = setTimeout(() => {
      this.req.destroy();
      this.finish({ ok: false, reason: "timeout", error: `timeout: no complete response within ${this.opts.timeoutMs} ms` });
    }, this.opts.timeoutMs);
  }

  finish(r: GuardedPostResult) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(r);
  }

  failed(err: NodeJS.ErrnoException, req: http.ClientRequest, answered: boolean) {
    // A pooled connection the receiver closed just as we wrote on it fails before any answer: the
    // receiver never read the request, so it goes once more on a fresh connection (Node's documented pattern).
    if (!answered && !this.settled && !this.retried && req.reusedSocket && err.code === "ECONNRESET") {
      this.retried = true;
      this.req = this.send();
      return;
    }
    this.finish({ ok: false, reason: err.name === "RefusedTargetError" ? "refused" : "network", error: describeError(err) });
  }

  /** One request on a pooled (or new) connection. */
  private send(): http.ClientRequest {
    const { target, opts } = this;
    const method = opts.method ?? "POST";
    // The head as a flat list (Node writes it as given, without a header object per request), Host
    // first as Node would add it.
    const headers: string[] = ["host", target.host];
    for (const name in opts.headers) headers.push(name, opts.headers[name]);
    if (method !== "GET") headers.push("content-length", String(typeof opts.body === "string" ? Buffer.byteLength(opts.body) : opts.body.length));
    const options = { hostname: target.hostname, port: target.port, path: target.path, method, headers, agent: target.secure ? agents.https : agents.http };
    const req = (target.secure ? https : http).request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (size < opts.keepBytes) chunks.push(chunk);
        size += chunk.length;
        if (size > opts.maxBytes) res.destroy();
      });
      const retryAfter = typeof res.headers["retry-after"] === "string" ? res.headers["retry-after"] : null;
      const complete = () =>
        this.finish({
          ok: true,
          statusCode: res.statusCode ?? 0,
          body: chunks.length ? Buffer.concat(chunks).subarray(0, opts.keepBytes).toString("utf8") : "",
          retryAfter,
        });
      res.on("end", complete);
      res.on("close", complete);
      res.on("error", complete);
    });
    let answered = false;
    req.once("response", () => (answered = true));
    req.on("error", (err: NodeJS.ErrnoException) => this.failed(err, req, answered));
    if (method === "GET") req.end();
    else req.end(opts.body, () => opts.onWritten?.());
    return req;
  }
}
