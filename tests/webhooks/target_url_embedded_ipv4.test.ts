// IPv6 spellings of internal IPv4 addresses must not pass the SSRF guard: IPv4-compatible
// (`[::127.0.0.1]`, which URLs and DNS answers may spell `::7f00:1`), IPv4-mapped, NAT64
// (64:ff9b::/96) and 6to4 (2002::/16) embedding a private address. Checked on each path the guard
// has: the URL shape (literal host), the save-time resolution, and the connection's own lookup.
import { afterEach, describe, expect, it } from "vitest";
import type { LookupAddress } from "node:dns";
import { toAppError } from "../../server/lib/errors";
import { guardedPost } from "../../server/lib/guarded-post";
import { checkUrlShape, guardedLookup, refusedAddressReason, refusedHostReason, refusedLiteralHostReason } from "../../server/lib/target-url";
import { tenantWithKey } from "../helpers/api";
import { dashboardCaller } from "../helpers/webhooks";

const COMPAT_LOOPBACK = "is an IPv4-compatible address (of 127.0.0.1; deprecated, never a public target)";

/** The connection-time check, as an http Agent calls it: the error (or addresses) its callback gets. */
function lookupThroughGuard(host: string): Promise<{ error: Error | null; addresses: LookupAddress[] }> {
  return new Promise((resolve) => guardedLookup(host, { all: true }, (error, addresses) => resolve({ error, addresses: addresses as LookupAddress[] })));
}

const savedLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;
afterEach(() => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = savedLoopback;
});

describe("SSRF guard: IPv6 forms of internal IPv4 addresses", () => {
  it("ipv4_compatible_loopback_is_refused_in_both_spellings", () => {
    for (const loopbackAllowed of [false, true]) {
      expect(refusedAddressReason("::127.0.0.1", loopbackAllowed)).toBe(COMPAT_LOOPBACK);
      expect(refusedAddressReason("::7f00:1", loopbackAllowed)).toBe(COMPAT_LOOPBACK);
    }
    expect(refusedAddressReason("::10.0.0.1", false)).toBe("is an IPv4-compatible address (of 10.0.0.1; deprecated, never a public target)");
    // Deprecated even around a public address: nothing legitimate is reached that way.
    expect(refusedAddressReason("::8.8.8.8", false)).toMatch(/^is an IPv4-compatible address/);
    expect(refusedAddressReason("::2", false)).toMatch(/^is an IPv4-compatible address/);
    // The rest of ::/8 is reserved.
    expect(refusedAddressReason("::ffff:ffff:7f00:1", false)).toBe("is a reserved address");
    // :: and ::1 stay what they are.
    expect(refusedAddressReason("::1", false)).toBe("is a loopback address");
    expect(refusedAddressReason("::", false)).toBe("is a unspecified address");
  });

  it("ipv4_mapped_is_judged_as_the_ipv4_it_carries", () => {
    expect(refusedAddressReason("::ffff:127.0.0.1", false)).toBe("is a loopback address");
    expect(refusedAddressReason("::ffff:7f00:1", false)).toBe("is a loopback address");
    expect(refusedAddressReason("::ffff:169.254.169.254", false)).toBe("is a linkLocal address");
    expect(refusedAddressReason("::ffff:10.1.2.3", false)).toBe("is a private address");
    expect(refusedAddressReason("::ffff:8.8.8.8", false)).toBeNull();
  });

  it("nat64_and_6to4_refuse_a_private_embedded_ipv4_and_allow_a_public_one", () => {
    expect(refusedAddressReason("64:ff9b::127.0.0.1", false)).toBe("is a NAT64 address of 127.0.0.1, which is a loopback address");
    expect(refusedAddressReason("64:ff9b::a00:1", false)).toBe("is a NAT64 address of 10.0.0.1, which is a private address");
    expect(refusedAddressReason("64:ff9b::a9fe:a9fe", false)).toBe("is a NAT64 address of 169.254.169.254, which is a linkLocal address");
    // A loopback allowance is for direct loopback only, never through a translator.
    expect(refusedAddressReason("64:ff9b::127.0.0.1", true)).toBe("is a NAT64 address of 127.0.0.1, which is a loopback address");
    expect(refusedAddressReason("2002:a00:1::1", false)).toBe("is a 6to4 address of 10.0.0.1, which is a private address");
    expect(refusedAddressReason("2002:7f00:1::", false)).toBe("is a 6to4 address of 127.0.0.1, which is a loopback address");
    expect(refusedAddressReason("2002:c0a8:101::1", false)).toBe("is a 6to4 address of 192.168.1.1, which is a private address");
    // What DNS64 answers for a public IPv4-only host on an IPv6-only network stays reachable.
    expect(refusedAddressReason("64:ff9b::8.8.8.8", false)).toBeNull();
    expect(refusedAddressReason("2002:808:808::1", false)).toBeNull();
    // The local-use NAT64 prefix translates to anything: refused whole.
    expect(refusedAddressReason("64:ff9b:1::a00:1", false)).toBe("is a rfc6052 address");
  });

  it("literal_hosts_in_urls_are_refused_by_the_shape_check", () => {
    expect(checkUrlShape("https://[::127.0.0.1]/hook", false)).toEqual({ reason: `host ::7f00:1 ${COMPAT_LOOPBACK}` });
    expect(checkUrlShape("https://[::7f00:1]/hook", true)).toEqual({ reason: `host ::7f00:1 ${COMPAT_LOOPBACK}` });
    expect(checkUrlShape("https://[::ffff:127.0.0.1]/", false)).toEqual({ reason: "host ::ffff:7f00:1 is a loopback address" });
    expect(checkUrlShape("https://[64:ff9b::10.0.0.1]/", false)).toEqual({
      reason: "host 64:ff9b::a00:1 is a NAT64 address of 10.0.0.1, which is a private address",
    });
    expect(checkUrlShape("https://[2002:a00:1::1]/", false)).toEqual({
      reason: "host 2002:a00:1::1 is a 6to4 address of 10.0.0.1, which is a private address",
    });
    // What the CRM's base_url check and guardedPost use.
    expect(refusedLiteralHostReason("[::7f00:1]", false)).toBe(`host ::7f00:1 ${COMPAT_LOOPBACK}`);
    expect(refusedLiteralHostReason("[64:ff9b::a00:1]", false)).toBe("host 64:ff9b::a00:1 is a NAT64 address of 10.0.0.1, which is a private address");
    expect(refusedLiteralHostReason("[2002:808:808::1]", false)).toBeNull();
  });

  it("the_save_time_resolution_refuses_them", async () => {
    expect(await refusedHostReason("[::7f00:1]", false)).toBe(`host ::7f00:1 ${COMPAT_LOOPBACK}`);
    expect(await refusedHostReason("::127.0.0.1", false)).toBe(`host ::127.0.0.1 ${COMPAT_LOOPBACK}`);
    expect(await refusedHostReason("[2002:a00:1::1]", false)).toBe("host 2002:a00:1::1 is a 6to4 address of 10.0.0.1, which is a private address");
  });

  it("the_connection_lookup_refuses_them_whatever_spelling_the_resolver_answers", async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    // The resolver hands back the dotted compatible spelling as is; it is judged, not trusted.
    const compat = await lookupThroughGuard("::127.0.0.1");
    expect(compat.error?.name).toBe("RefusedTargetError");
    expect(compat.error?.message).toBe(`refused target: ::127.0.0.1 resolves to ::127.0.0.1, which ${COMPAT_LOOPBACK}`);
    expect((await lookupThroughGuard("::7f00:1")).error?.message).toBe(`refused target: ::7f00:1 resolves to ::7f00:1, which ${COMPAT_LOOPBACK}`);
    expect((await lookupThroughGuard("64:ff9b::10.0.0.1")).error?.message).toBe(
      "refused target: 64:ff9b::10.0.0.1 resolves to 64:ff9b::10.0.0.1, which is a NAT64 address of 10.0.0.1, which is a private address",
    );
    expect((await lookupThroughGuard("2002:a00:1::1")).error?.name).toBe("RefusedTargetError");
    // A real name still resolves (loopback allowed in this test): the guard refuses only what it must.
    const local = await lookupThroughGuard("localhost");
    expect(local.error).toBeNull();
    expect(local.addresses.map((a) => a.address)).toContain("127.0.0.1");
  });

  it("a_post_to_an_ipv4_compatible_loopback_never_connects", async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    const result = await guardedPost(new URL("http://[::127.0.0.1]:9/hook"), {
      headers: {},
      body: Buffer.from("{}"),
      timeoutMs: 2000,
      keepBytes: 100,
      maxBytes: 1000,
    });
    expect(result).toEqual({ ok: false, reason: "refused", error: `refused target: host ::7f00:1 ${COMPAT_LOOPBACK}` });
  });

  it("400_a_subscription_to_an_ipv4_compatible_or_nat64_private_target", async () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = "0";
    const { tenantId } = await tenantWithKey();
    const owner = dashboardCaller(tenantId);
    const refusal = (url: string) => owner.webhooks.createSubscription({ url, events: ["lead.created"] }).then(() => null, toAppError);
    expect(await refusal("https://[::127.0.0.1]/hook")).toMatchObject({
      status: 400,
      field: "url",
      message: `invalid field 'url': host ::7f00:1 ${COMPAT_LOOPBACK}`,
    });
    expect(await refusal("https://[64:ff9b::169.254.169.254]/latest")).toMatchObject({
      status: 400,
      field: "url",
      message:
        "invalid field 'url': host 64:ff9b::a9fe:a9fe is a NAT64 address of 169.254.169.254, which is a linkLocal address; webhooks go to public addresses only (WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for local testing, never private ranges)",
    });
    expect(await refusal("https://[2002:a00:1::1]/")).toMatchObject({ status: 400, field: "url" });
  });
});
