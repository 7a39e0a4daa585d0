// One resolver for the client's address: the socket's remote address, unless that address is a
// configured proxy (TRUSTED_PROXIES, or AUTH_TRUSTED_PROXIES when it is unset); then
// X-Forwarded-For is walked right to left past trusted hops.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clientIpFromHeaders, forwardResolvedClientIp, resolveClientIp, trustedProxiesFromEnv } from "../../server/lib/client-ip";
import { normalizeIp } from "../../server/lib/ip-address";

const saved = { TRUSTED_PROXIES: process.env.TRUSTED_PROXIES, AUTH_TRUSTED_PROXIES: process.env.AUTH_TRUSTED_PROXIES };
function trust(value: string | undefined, name: "TRUSTED_PROXIES" | "AUTH_TRUSTED_PROXIES" = "TRUSTED_PROXIES") {
  delete process.env.TRUSTED_PROXIES;
  delete process.env.AUTH_TRUSTED_PROXIES;
  if (value !== undefined) process.env[name] = value;
}
afterEach(() => trust(undefined));
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
});

describe("resolveClientIp", () => {
  it("is the socket address when no proxy is trusted, whatever X-Forwarded-For says", () => {
    trust(undefined);
    expect(resolveClientIp({ remoteAddress: "203.0.113.7", forwardedFor: "198.51.100.1" })).toBe("203.0.113.7");
    expect(resolveClientIp({ remoteAddress: "::ffff:203.0.113.7", forwardedFor: null })).toBe("203.0.113.7");
  });

  it("walks X-Forwarded-For right to left past trusted proxies when the socket is one", () => {
    trust("10.0.0.0/8, 192.0.2.10");
    // client, then two trusted proxies; the leftmost entries are the client's own claims.
    const chain = "1.1.1.1, 198.51.100.23, 10.1.2.3";
    expect(resolveClientIp({ remoteAddress: "192.0.2.10", forwardedFor: chain })).toBe("198.51.100.23");
    // The same header from an untrusted socket counts for nothing.
    expect(resolveClientIp({ remoteAddress: "203.0.113.7", forwardedFor: chain })).toBe("203.0.113.7");
    // Only trusted hops all the way: the farthest one.
    expect(resolveClientIp({ remoteAddress: "10.0.0.1", forwardedFor: "10.0.0.2" })).toBe("10.0.0.2");
    expect(resolveClientIp({ remoteAddress: "10.0.0.1", forwardedFor: null })).toBe("10.0.0.1");
    // A hop that is not an address stops the walk at the trusted proxy that handed it on.
    expect(resolveClientIp({ remoteAddress: "10.0.0.1", forwardedFor: "1.1.1.1, not-an-ip" })).toBe("10.0.0.1");
  });

  it("reads the older AUTH_TRUSTED_PROXIES when TRUSTED_PROXIES is unset", () => {
    trust("127.0.0.1", "AUTH_TRUSTED_PROXIES");
    expect(resolveClientIp({ remoteAddress: "127.0.0.1", forwardedFor: "198.51.100.9" })).toBe("198.51.100.9");
  });

  it("without a socket (Next route mounts) starts at the header's rightmost entry", () => {
    trust(undefined);
    expect(clientIpFromHeaders(new Headers({ "x-forwarded-for": "1.1.1.1, 198.51.100.4" }))).toBe("198.51.100.4");
    expect(clientIpFromHeaders(new Headers())).toBeNull();
    expect(clientIpFromHeaders(new Headers({ "x-forwarded-for": "garbage" }))).toBeNull();
    trust("198.51.100.0/24");
    expect(clientIpFromHeaders(new Headers({ "x-forwarded-for": "1.1.1.1, 198.51.100.4" }))).toBe("1.1.1.1");
  });

  it("normalizes addresses: ports, brackets, IPv4-mapped IPv6, case", () => {
    expect(normalizeIp(" 203.0.113.7:5443 ")).toBe("203.0.113.7");
    expect(normalizeIp("[2001:DB8::1]:443")).toBe("2001:db8::1");
    expect(normalizeIp("::FFFF:192.0.2.1")).toBe("192.0.2.1");
    expect(normalizeIp("unknown")).toBeNull();
  });

  it("refuses a malformed TRUSTED_PROXIES entry, naming the variable", () => {
    expect(() => trustedProxiesFromEnv({ TRUSTED_PROXIES: "10.0.0.0/33" })).toThrow('TRUSTED_PROXIES must list IP addresses or CIDR ranges, got "10.0.0.0/33"');
    expect(() => trustedProxiesFromEnv({ AUTH_TRUSTED_PROXIES: "proxy.internal" })).toThrow("AUTH_TRUSTED_PROXIES");
  });
});

describe("forwardResolvedClientIp on a real socket", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // Answers with the X-Forwarded-For a handler behind the lean front would see.
    server = createServer((req, res) => {
      forwardResolvedClientIp(req);
      res.end(String(req.headers["x-forwarded-for"] ?? ""));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const seen = (from: string, forwardedFor?: string) =>
    new Promise<string>((resolve, reject) => {
      const headers: Record<string, string> = forwardedFor ? { "x-forwarded-for": forwardedFor } : {};
      request({ host: "127.0.0.1", port, localAddress: from, headers, agent: false }, (res) => {
        let body = "";
        res
          .setEncoding("utf8")
          .on("data", (c) => (body += c))
          .on("end", () => resolve(body));
      })
        .on("error", reject)
        .end();
    });

  it("overwrites a client's X-Forwarded-For with its socket address", async () => {
    trust(undefined);
    expect(await seen("127.0.0.2", "198.51.100.1")).toBe("127.0.0.2");
    expect(await seen("127.0.0.3")).toBe("127.0.0.3");
  });

  it("keeps the client a trusted proxy forwarded, alone", async () => {
    trust("127.0.0.5");
    expect(await seen("127.0.0.5", "1.1.1.1, 198.51.100.1")).toBe("198.51.100.1");
    expect(await seen("127.0.0.6", "198.51.100.1")).toBe("127.0.0.6");
  });
});
