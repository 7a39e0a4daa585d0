// The save-time host check (no DNS: the CRM's base_url, guardedPost's literal check) used to compare
// the host as written, so `https://localhost./` (the fully qualified spelling, which resolves the
// same) passed, as did `app.localhost` (every name under localhost is loopback, RFC 6761) and the
// loopback names of hosts files. Now each is refused like `localhost`; the send-time DNS guard still
// applies to every other name.
import { describe, expect, it } from "vitest";
import { refusedLiteralHostReason } from "../../server/lib/target-url";
import { toAppError } from "../../server/lib/errors";
import { openDatabase } from "../../server/db/database";
import { dashboardCaller, newTenant } from "../helpers/api";

describe("refusedLiteralHostReason", () => {
  it.each([
    ["localhost.", "localhost"],
    ["LOCALHOST..", "localhost"],
    ["app.localhost", "app.localhost"],
    ["app.localhost.", "app.localhost"],
    ["ip6-localhost", "ip6-localhost"],
    ["ip6-loopback", "ip6-loopback"],
    ["localhost.localdomain", "localhost.localdomain"],
  ])("%s_is_a_loopback_host", (host, shown) => {
    expect(refusedLiteralHostReason(host, false)).toBe(`host ${shown} is a loopback address`);
    // The development allowance for loopback covers every spelling alike.
    expect(refusedLiteralHostReason(host, true)).toBeNull();
  });

  it("public_names_that_merely_contain_localhost_pass", () => {
    for (const host of ["localhost.example.com", "mylocalhost", "localhost-crm.example", "crm.example.com."]) {
      expect(refusedLiteralHostReason(host, false)).toBeNull();
    }
  });
});

describe("the CRM base_url at save time", () => {
  it.each(["https://localhost./", "https://localhost.:8443/api", "https://crm.localhost/", "https://ip6-localhost/"])(
    "%s_is_400_naming_base_url_and_nothing_is_saved",
    async (baseUrl) => {
      const { id: tenantId } = await newTenant();
      const admin = dashboardCaller(tenantId, "admin");
      const error = toAppError(await admin.crm.setConnection({ provider: "http", base_url: baseUrl, token: "t" }).catch((e) => e));
      expect({ status: error.status, code: error.errorCode, field: error.field }).toEqual({ status: 400, code: "bad_request", field: "base_url" });
      expect(error.message).toMatch(/^invalid field 'base_url': host [a-z0-9.-]+ is a loopback address, inside this service's network$/);
      expect(await admin.crm.connection()).toBeNull();
      expect(await (await openDatabase()).prisma.auditLog.count({ where: { tenantId } })).toBe(0);
    },
  );
});
