// Where a dashboard request comes from: the trusted browser origins (CSRF defence for cookie-
// authenticated calls) and the client address the sign-in rate limit is keyed on.
//
// Origins: BETTER_AUTH_URL's origin plus AUTH_TRUSTED_ORIGINS (comma list). With neither set,
// only the origin the request was addressed to (Host, and X-Forwarded-Proto) is trusted, i.e.
// strictly same-origin.
//
// Client address (the sign-in limit's key): better-auth reads X-Forwarded-For. The lean front
// (`npm start`) overwrites that header with the address server/lib/client-ip.ts resolved from the
// socket (proxy headers count only from TRUSTED_PROXIES), so a client cannot pick its own
// address. Behind `next start` alone the header is Next's (the socket address only when the client
// sent none): run it behind a proxy that sets the header, and list that proxy in TRUSTED_PROXIES.
import { trustedProxiesFromEnv } from "../lib/client-ip";
import { setting } from "../lib/settings";

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export function trustedOriginsFor(headers: Headers | undefined): string[] {
  const configured = [setting("BETTER_AUTH_URL"), ...(setting("AUTH_TRUSTED_ORIGINS") ?? [])]
    .map((u) => (u ? originOf(u) : null))
    .filter((o): o is string => !!o);
  if (configured.length) return configured;
  const host = headers?.get("x-forwarded-host") ?? headers?.get("host");
  if (!host) return [];
  const proto = headers?.get("x-forwarded-proto")?.split(",")[0].trim() || "http";
  const own = originOf(`${proto}://${host}`);
  return own ? [own] : [];
}

/**
 * Cookie-authenticated mutations need a browser Origin from the trusted list (better-auth checks
 * its own routes; /api/trpc is outside them). A request without Origin is not from a browser
 * form or script on another site, but it carries cookies only if a browser sent it, so it is
 * refused too unless it has Sec-Fetch-Site: same-origin.
 */
export function isTrustedOrigin(headers: Headers): boolean {
  const origin = headers.get("origin");
  if (!origin || origin === "null") return headers.get("sec-fetch-site") === "same-origin";
  return trustedOriginsFor(headers).includes(origin);
}

/** better-auth's client-address options: the header the lean front writes, walked past the same trusted proxies. */
export function authIpOptions() {
  return {
    ipAddressHeaders: ["x-forwarded-for"],
    trustedProxies: trustedProxiesFromEnv().entries,
  };
}
