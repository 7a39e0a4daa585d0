// Which webhook targets are allowed: https only, and never an address inside our own network
// (loopback, private, link-local, CGNAT, metadata, multicast, reserved…), nor an IPv6 address that
// stands for one (IPv4-mapped, IPv4-compatible, NAT64 and 6to4 are judged by the IPv4 they carry). Checked when a
// subscription is saved and again at delivery time through the socket's own DNS lookup (DNS can
// change, and checking a different resolution than the one connected to would be bypassable).
// `WEBHOOK_ALLOW_LOOPBACK=1` (development and tests) also allows http://localhost and loopback.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { promises as dns } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { badRequest } from "./errors";
import { setting } from "./settings";
import { MAX_URL_LENGTH } from "./wire";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "::1"]);

export const loopbackAllowed = (env: Record<string, string | undefined> = process.env) => setting("WEBHOOK_ALLOW_LOOPBACK", env);

/** Why an address may not be a webhook target, or null when it is a public unicast address. */
export function refusedAddressReason(address: string, allowLoopback = loopbackAllowed()): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(canonicalAddress(address));
  } catch {
    return "is not an IP address";
  }
  if (parsed instanceof ipaddr.IPv6) {
    const carried = carriedIPv4(parsed);
    // IPv4-mapped IPv6 is judged as the IPv4 it carries (the socket connects to exactly that address).
    if (carried?.form === "mapped") return rangeReason(carried.ipv4, allowLoopback);
    if (carried?.form === "compatible") return `is an IPv4-compatible address (of ${carried.ipv4}; deprecated, never a public target)`;
    if (carried) {
      // NAT64 (what DNS64 answers on an IPv6-only network) and 6to4 reach the IPv4 they embed: judge that.
      const inner = rangeReason(carried.ipv4, false);
      if (inner) return `is a ${carried.form} address of ${carried.ipv4}, which ${inner}`;
      return null;
    }
    // The rest of ::/8 is reserved by the IETF (ipaddr.js calls parts of it unicast): never a target.
    if (parsed.parts[0] < 0x100 && parsed.range() === "unicast") return "is a reserved address";
  }
  return rangeReason(parsed, allowLoopback);
}

function rangeReason(parsed: ipaddr.IPv4 | ipaddr.IPv6, allowLoopback: boolean): string | null {
  const range = parsed.range();
  if (range === "unicast") return null;
  if (range === "loopback" && allowLoopback) return null;
  return `is a ${range} address`;
}

/**
 * The hex form WHATWG URLs use (`::127.0.0.1` becomes `::7f00:1`). ipaddr.js reads the dotted
 * IPv4-compatible form as IPv4-mapped, and a DNS answer may spell an address either way.
 */
function canonicalAddress(address: string): string {
  if (!address.includes(":") || address.includes("%")) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

type CarriedIPv4 = { form: "mapped" | "compatible" | "NAT64" | "6to4"; ipv4: ipaddr.IPv4 };

/** The IPv4 address an IPv6 address stands for, in the forms that route to it (or name it). */
function carriedIPv4(v6: ipaddr.IPv6): CarriedIPv4 | null {
  const p = v6.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { form: "mapped", ipv4: fromWords(p[6], p[7]) };
  // ::/96 except :: and ::1, which are judged as the unspecified and loopback addresses they are.
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return { form: "compatible", ipv4: fromWords(p[6], p[7]) };
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { form: "NAT64", ipv4: fromWords(p[6], p[7]) };
  if (p[0] === 0x2002) return { form: "6to4", ipv4: fromWords(p[1], p[2]) };
  return null;
}

class RefusedTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedTargetError";
  }
}

/**
 * A host as the checks compare it: no brackets, lower case, and no trailing dot (`localhost.` is
 * the fully qualified spelling of `localhost` and resolves the same).
 */
const bare = (hostname: string) =>
  hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();

/** Names of this machine without DNS: `localhost` and every name under it (RFC 6761), and the loopback names of common hosts files. */
const LOCAL_NAMES = new Set(["localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6", "ip6-localhost", "ip6-loopback"]);
const isLocalName = (host: string) => LOCAL_NAMES.has(host) || host.endsWith(".localhost");

/** Scheme and shape rules (no DNS). Returns the parsed URL or the reason it is refused. */
export function checkUrlShape(raw: string, allowLoopback = loopbackAllowed()): { url: URL } | { reason: string } {
  if (raw.length > MAX_URL_LENGTH) return { reason: `must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: "must be an absolute https URL" };
  }
  const host = bare(url.hostname);
  const devHttp = url.protocol === "http:" && allowLoopback && LOOPBACK_HOSTS.has(host);
  if (url.protocol !== "https:" && !devHttp) return { reason: "must be an https URL" };
  if (url.username || url.password) return { reason: "must not contain credentials" };
  if (isIP(host)) {
    const refused = refusedAddressReason(host, allowLoopback);
    if (refused) return { reason: `host ${host} ${refused}` };
  }
  return { url };
}

/**
 * Validation when a subscription is created or its URL changed: the shape rules, then every
 * address the host resolves to must be allowed. Throws a 400 naming `field`.
 */
export async function assertAllowedTargetUrl(raw: string, field = "url"): Promise<string> {
  const allowLoopback = loopbackAllowed();
  const shape = checkUrlShape(raw, allowLoopback);
  if ("reason" in shape) throw badRequest(`invalid field '${field}': ${withLocalTestingHint(shape.reason, raw, allowLoopback)}`, field);
  const refused = await refusedHostReason(shape.url.hostname, allowLoopback);
  if (refused) throw badRequest(`invalid field '${field}': ${withLocalTestingHint(refused, raw, allowLoopback)}`, field);
  return shape.url.toString();
}

const LOOPBACK_HINT =
  "to allow loopback targets (http or https on 127.0.0.1, ::1 or localhost) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1";

/**
 * A refusal with what a developer can do about it: loopback targets (the usual local test) are
 * allowed by WEBHOOK_ALLOW_LOOPBACK=1; private ranges never are; http is for loopback only.
 */
function withLocalTestingHint(reason: string, raw: string, allowLoopback: boolean): string {
  let host = "";
  try {
    host = bare(new URL(raw).hostname);
  } catch {
    return reason;
  }
  const loopbackTarget = LOOPBACK_HOSTS.has(host) || isLocalName(host) || reason.endsWith("is a loopback address");
  if (loopbackTarget && !allowLoopback) return `${reason}; ${LOOPBACK_HINT}`;
  if (reason === "must be an https URL")
    return allowLoopback ? `${reason} (http is allowed for loopback hosts only: 127.0.0.1, ::1, localhost)` : `${reason}; ${LOOPBACK_HINT}`;
  if (/ address$/.test(reason))
    return `${reason}; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)`;
  return reason;
}

/** Why a host may not be connected to, or null: it does not resolve, or some address it resolves to is inside our network. */
export async function refusedHostReason(hostname: string, allowLoopback = loopbackAllowed()): Promise<string | null> {
  const host = bare(hostname);
  if (isIP(host)) {
    const refused = refusedAddressReason(host, allowLoopback);
    return refused ? `host ${host} ${refused}` : null;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    return `host ${host} does not resolve`;
  }
  for (const { address } of addresses) {
    const refused = refusedAddressReason(address, allowLoopback);
    if (refused) return `host ${host} resolves to ${address}, which ${refused}`;
  }
  return null;
}

/**
 * Shape-only check of a host (no DNS): refuses IP literals inside our network and the names of
 * this machine (`localhost`, `localhost.`, `app.localhost`, `ip6-localhost`…). An
 * address literal never goes through `guardedLookup`, so `guardedPost` and the CRM's set-time check use this.
 */
export function refusedLiteralHostReason(hostname: string, allowLoopback = loopbackAllowed()): string | null {
  const host = bare(hostname);
  if (isLocalName(host)) return allowLoopback ? null : `host ${host} is a loopback address`;
  if (!isIP(host)) return null;
  const refused = refusedAddressReason(host, allowLoopback);
  return refused ? `host ${host} ${refused}` : null;
}

/**
 * A `lookup` for http(s).request: resolves like the system does, then refuses the connection when
 * any resolved address is not allowed. The socket connects only to the addresses checked here.
 */
export const guardedLookup: LookupFunction = (hostname, opts, callback) => {
  const family = opts.family === "IPv4" ? 4 : opts.family === "IPv6" ? 6 : (opts.family ?? 0);
  dnsLookup(hostname, { family, all: true, verbatim: true }, (err, addresses) => {
    if (err) return callback(err, opts.all ? [] : "", 0);
    for (const { address } of addresses) {
      const refused = refusedAddressReason(address);
      if (refused) return callback(new RefusedTargetError(`refused target: ${hostname} resolves to ${address}, which ${refused}`), opts.all ? [] : "", 0);
    }
    if (opts.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};
