// One POST to a tenant-set URL (a webhook target, a CRM): the socket connects only to addresses
// that pass the target rules (the check runs in the connection's own DNS lookup, so a name that
// changes its answer between a check and the connection cannot slip through), no redirects are
// followed, and one overall timeout bounds it. Never throws: failures come back as `error`.
import http from "node:http";
import https from "node:https";
import { guardedLookup, refusedLiteralHostReason } from "./target-url";

// Keep-alive pools: most tenants have few targets, and a reused TLS connection saves a handshake.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, lookup: guardedLookup as never }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, lookup: guardedLookup as never }),
};

export type GuardedPostResult =
  | { ok: true; statusCode: number; body: string }
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
  opts: { headers: Record<string, string>; body: Buffer; timeoutMs: number; keepBytes: number; maxBytes: number },
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
    const secure = url.protocol === "https:";
    const headers = { ...opts.headers, "content-length": String(opts.body.length) };
    const req = (secure ? https : http).request(url, { method: "POST", headers, agent: secure ? agents.https : agents.http }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (size < opts.keepBytes) chunks.push(chunk);
        size += chunk.length;
        if (size > opts.maxBytes) res.destroy();
      });
      const complete = () => finish({ ok: true, statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, opts.keepBytes).toString("utf8") });
      res.on("end", complete);
      res.on("close", complete);
      res.on("error", complete);
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, reason: "timeout", error: `timeout: no complete response within ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);
    req.on("error", (err: NodeJS.ErrnoException) =>
      finish({ ok: false, reason: err.name === "RefusedTargetError" ? "refused" : "network", error: describeError(err) }),
    );
    req.end(opts.body);
  });
}
