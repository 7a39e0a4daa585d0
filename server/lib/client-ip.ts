// The client's address: the one resolver every surface uses (the per-IP limit of failed
// authentication on /api/v1, the dashboard's sign-in limit through the lean front).
//
// It is the socket's remote address, unless that address is a configured proxy (TRUSTED_PROXIES:
// IPs or CIDRs, comma list; AUTH_TRUSTED_PROXIES is read when TRUSTED_PROXIES is unset). Then
// X-Forwarded-For is walked right to left, skipping trusted hops: the first untrusted address is
// the client (one a trusted proxy saw). A proxy header from anyone else is ignored, so a client
// cannot pick its own address by sending one.
//
// Without a socket (the Next route mounts: `next start`/`next dev` hand route handlers no socket)
// the same walk starts at the header's rightmost entry, which Next fills with the socket address
// only when the client sent no header: behind `next start` alone, reachable directly, the address
// is what the client claims. The lean front (`npm start`) has the socket and rewrites the header
// it hands on (`forwardResolvedClientIp`), so both surfaces behind it see the resolved address.
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { normalizeIp, parseIpRange } from "./ip-address";
import { setting } from "./settings";

const FORWARDED_FOR = "x-forwarded-for";

type Trusted = { name: string; raw: string; entries: string[]; list: BlockList };
let trusted: Trusted | undefined;

/**
 * TRUSTED_PROXIES (or AUTH_TRUSTED_PROXIES) as a list; throws naming the variable on a malformed entry.
 * Read on every request: through the settings (read once per process), and parsed again only when they change.
 */
export function trustedProxiesFromEnv(env: Record<string, string | undefined> = process.env): Trusted {
  const own = setting("TRUSTED_PROXIES", env);
  const name = own !== undefined ? "TRUSTED_PROXIES" : "AUTH_TRUSTED_PROXIES";
  const raw = own ?? setting("AUTH_TRUSTED_PROXIES", env) ?? "";
  if (trusted?.raw === raw && trusted.name === name) return trusted;
  const list = new BlockList();
  const entries = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    // The setting's own check (settings.ts) parses with the same function: this throw is for a caller's env only.
    const range = parseIpRange(entry);
    if (!range) throw new Error(`${name} must list IP addresses or CIDR ranges, got "${entry}"`);
    list.addSubnet(range.ip, range.bits, range.family === 4 ? "ipv4" : "ipv6");
  }
  trusted = { name, raw, entries, list };
  return trusted;
}

function isTrustedProxy(ip: string, list: Trusted): boolean {
  return list.entries.length > 0 && list.list.check(ip, isIP(ip) === 4 ? "ipv4" : "ipv6");
}

/**
 * The client's address from the socket's remote address (when the server has one) and the
 * X-Forwarded-For value. Walks from the nearest hop outwards while hops are trusted proxies;
 * an entry that is not an address ends the walk at the hop that handed it on (null if none did).
 */
export function resolveClientIp(input: { remoteAddress?: string | null; forwardedFor?: string | null }): string | null {
  const proxies = trustedProxiesFromEnv();
  const chain = input.forwardedFor ? input.forwardedFor.split(",") : [];
  if (input.remoteAddress) chain.push(input.remoteAddress);
  let nearest: string | null = null;
  for (let i = chain.length - 1; i >= 0; i--) {
    const ip = normalizeIp(chain[i]!);
    if (!ip) return nearest;
    nearest = ip;
    if (!isTrustedProxy(ip, proxies)) return ip;
  }
  return nearest; // every hop is a trusted proxy: the farthest one is all we know
}

/** For the mounts without a socket (Next route handlers): the same walk over the forwarded header. */
export function clientIpFromHeaders(headers: { get(name: string): string | null }): string | null {
  return resolveClientIp({ forwardedFor: headers.get(FORWARDED_FOR) });
}

/**
 * The lean front, before handing a request to a handler without a socket (Next, the Fetch
 * mounts): X-Forwarded-For becomes the resolved client address alone, whatever the client sent,
 * so better-auth's sign-in limit and `clientIpFromHeaders` see the address this front resolved.
 */
export function forwardResolvedClientIp(req: IncomingMessage): void {
  const ip = resolveClientIp({ remoteAddress: req.socket.remoteAddress, forwardedFor: headerValue(req.headers[FORWARDED_FOR]) });
  if (ip) req.headers[FORWARDED_FOR] = ip;
  else delete req.headers[FORWARDED_FOR];
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(", ") : (v ?? null));
