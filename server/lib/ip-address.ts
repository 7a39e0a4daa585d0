// IP addresses and ranges as the server reads them: the client address resolver (client-ip.ts)
// and the TRUSTED_PROXIES setting's check (settings.ts) parse with these, so a range the setting
// accepts is one the resolver can use. A leaf: node:net only.
import { isIP } from "node:net";

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * An address as the resolver compares and reports it: trimmed, without brackets or a port,
 * IPv4-mapped IPv6 as plain IPv4, IPv6 in lower case. Null when it is not an IP address.
 */
export function normalizeIp(value: string): string | null {
  let v = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
  if (bracketed) v = bracketed[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(v)) v = v.slice(0, v.lastIndexOf(":")); // "1.2.3.4:5678"
  const mapped = IPV4_MAPPED.exec(v);
  if (mapped) v = mapped[1]!;
  const family = isIP(v);
  if (family === 4) return v;
  if (family === 6) return v.toLowerCase();
  return null;
}

export type IpRange = { ip: string; family: 4 | 6; bits: number };

/** "10.0.0.0/8", "2001:db8::/32" or one address (its full-length prefix); null when malformed. */
export function parseIpRange(entry: string): IpRange | null {
  const [address, prefix, ...rest] = entry.trim().split("/");
  const ip = normalizeIp(address ?? "");
  if (!ip || rest.length > 0) return null;
  const family = isIP(ip) === 4 ? 4 : 6;
  const max = family === 4 ? 32 : 128;
  const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
  return bits >= 0 && bits <= max ? { ip, family, bits } : null;
}
