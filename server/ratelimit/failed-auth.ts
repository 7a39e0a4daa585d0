// Unauthenticated traffic is limited too. A request whose credentials were refused counts against
// its client address, in buckets of their own (`<prefix>:failed-auth-ip:…`, apart from the webhook
// receivers' per-IP layer): RATE_LIMIT_FAILED_AUTH_PER_IP a window (default 500 a minute), then
// the answer is that layer's 429 instead of the 401. Only refusals count and only a refusal is
// turned into a 429, so valid credentials from the same address are never refused by this layer.
// Any surface that authenticates a caller (/api/v1, later the agent tools) answers its refusals
// through `refusalOfFailedAuth`.
import { AppError } from "../lib/errors";
import { limitFailedAuthentication } from "./index";

/**
 * The bucket of an address: an IPv4 address itself, an IPv6 address its /64 (one subscriber's
 * usual allocation, so rotating through it does not mint new budgets).
 */
export function failedAuthBucketOf(ip: string): string {
  if (!ip.includes(":")) return ip;
  const [head = "", tail] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // An embedded IPv4 tail ("::ffff:1.2.3.4") takes two groups; it is never inside the first four.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - width(left) - width(right)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

/**
 * What to answer a request whose authentication failed with `unauthorized`: that 401, or the
 * per-IP 429 (with its Retry-After and X-RateLimit-* headers) once the address is over its limit.
 * A request with no known address (an in-process caller; both HTTP fronts always resolve one)
 * gets the 401.
 */
export async function refusalOfFailedAuth(clientIp: string | null | undefined, unauthorized: AppError): Promise<AppError> {
  if (!clientIp) return unauthorized;
  const decision = await limitFailedAuthentication({ ip: failedAuthBucketOf(clientIp) });
  if (decision.allowed) return unauthorized;
  return new AppError("rate_limited", decision.message, { headers: decision.headers });
}
