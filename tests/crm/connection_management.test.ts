// The dashboard's tRPC procedures for the CRM connection: members read, owners and admins change,
// every change is audited, and the credentials never come back (only `has_credentials`).
import { describe, expect, it } from "vitest";
import { getDb } from "../../server/db/client";
import { decryptSecret } from "../../server/crypto/secret-box";
import { dashboardCaller, newTenant } from "../helpers/api";
import { toAppError } from "../../server/lib/errors";

const TOKEN = "pat-eu1-dashboard-token-abcdef";

const dashboardAs = (tenantId: string, role: "owner" | "admin" | "member") => dashboardCaller(tenantId, role);

const auditOf = async (tenantId: string) =>
  (await getDb()).auditLog.findMany({ where: { tenantId, action: "crm_connection.changed" }, orderBy: { createdAt: "asc" } });

describe("CRM connection management (dashboard tRPC)", () => {
  it("an admin sets the connection; the answer and the audit entry carry no credentials", async () => {
    const { id: tenantId } = await newTenant();
    const admin = dashboardAs(tenantId, "admin");
    expect(await admin.crm.connection()).toBeNull();

    const set = await admin.crm.setConnection({ provider: "hubspot", base_url: "https://api.hubapi.com", token: TOKEN, field_mapping: { name: "firstname" } });
    expect(set).toEqual({
      provider: "hubspot",
      base_url: "https://api.hubapi.com",
      field_mapping: { name: "firstname" },
      has_credentials: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(set)).not.toContain(TOKEN);

    const row = await (await getDb()).crmConnection.findUnique({ where: { tenantId } });
    expect(row!.credentialsEncrypted).not.toContain(TOKEN);
    expect(JSON.parse(decryptSecret(row!.credentialsEncrypted))).toEqual({ token: TOKEN });

    const [entry] = await auditOf(tenantId);
    expect(entry).toMatchObject({
      actorType: "user",
      actorId: "user-admin",
      actorLabel: "admin@example.test",
      targetType: "crm_connection",
      targetId: row!.id,
    });
    expect(entry.details).toEqual({
      change: "created",
      provider: "hubspot",
      base_url: "https://api.hubapi.com",
      mapped_keys: ["name"],
      credentials_changed: true,
    });
    expect(JSON.stringify(entry)).not.toContain(TOKEN);
  });

  it("keeps the stored token when an update to the same provider and URL omits it, updates the mapping alone, and deletes once", async () => {
    const { id: tenantId } = await newTenant();
    const owner = dashboardAs(tenantId, "owner");
    await owner.crm.setConnection({ provider: "http", base_url: "https://crm.example.com/v1", token: TOKEN, field_mapping: { name: "full_name" } });
    const kept = await owner.crm.setConnection({ provider: "http", base_url: "https://CRM.example.com:443/v1", field_mapping: { name: "name" } });
    expect(kept).toMatchObject({ base_url: "https://CRM.example.com:443/v1", field_mapping: { name: "name" }, has_credentials: true });
    const row = await (await getDb()).crmConnection.findUnique({ where: { tenantId } });
    expect(JSON.parse(decryptSecret(row!.credentialsEncrypted))).toEqual({ token: TOKEN });

    const remapped = await owner.crm.updateMapping({ field_mapping: { name: "name", phone: "mobile" } });
    expect(remapped.field_mapping).toEqual({ name: "name", phone: "mobile" });

    expect(await owner.crm.deleteConnection()).toEqual({ deleted: true });
    expect(await owner.crm.deleteConnection()).toEqual({ deleted: false });
    expect(await owner.crm.connection()).toBeNull();
    expect((await auditOf(tenantId)).map((e) => (e.details as { change: string }).change)).toEqual(["created", "updated", "mapping_updated", "deleted"]);
  });

  it("members read but cannot change (403), and nothing is audited", async () => {
    const { id: tenantId } = await newTenant();
    await dashboardAs(tenantId, "owner").crm.setConnection({ provider: "http", base_url: "https://crm.example.com", token: TOKEN, field_mapping: {} });
    const member = dashboardAs(tenantId, "member");
    expect(await member.crm.connection()).toMatchObject({ provider: "http", has_credentials: true });
    for (const attempt of [
      () => member.crm.setConnection({ provider: "http", base_url: "https://evil.example.com" }),
      () => member.crm.updateMapping({ field_mapping: { a: "b" } }),
      () => member.crm.deleteConnection(),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: "FORBIDDEN", message: "role 'member' cannot make changes; an owner or admin can" });
    }
    expect(await auditOf(tenantId)).toHaveLength(1);
  });

  it.each([
    [{ provider: "http", base_url: "https://crm.example.com" }, "missing required field 'token': a new CRM connection needs credentials"],
    [{ provider: "salesforce", base_url: "https://crm.example.com", token: "t" }, /^invalid field 'provider'/],
    [{ provider: "http", base_url: "ftp://crm.example.com", token: "t" }, "invalid field 'base_url': must be an https URL"],
    [{ provider: "http", base_url: "http://crm.example.com/v1", token: "t" }, "invalid field 'base_url': must be an https URL"],
    [
      { provider: "http", base_url: "http://localhost:8080", token: "t" },
      "invalid field 'base_url': host localhost is a loopback address, inside this service's network",
    ],
    [
      { provider: "http", base_url: "https://user:pw@crm.example.com", token: "t" },
      "invalid field 'base_url': must not contain credentials; use the token field",
    ],
    [
      { provider: "http", base_url: "https://crm.example.com", token: "t", field_mapping: { a: "x", b: "x" } },
      "invalid field 'field_mapping.b': CRM key 'x' is already mapped from 'a'",
    ],
    [{ provider: "http", base_url: "https://crm.example.com", token: "t", extra: 1 }, "unknown field 'extra'"],
    [
      { provider: "http", base_url: "http://169.254.169.254/latest", token: "t" },
      "invalid field 'base_url': host 169.254.169.254 is a linkLocal address, inside this service's network",
    ],
    [
      { provider: "http", base_url: "https://10.1.2.3/v1", token: "t" },
      "invalid field 'base_url': host 10.1.2.3 is a private address, inside this service's network",
    ],
    [{ provider: "hubspot", base_url: "https://[::1]", token: "t" }, "invalid field 'base_url': host ::1 is a loopback address, inside this service's network"],
    [
      { provider: "http", base_url: "https://localhost:8443", token: "t" },
      "invalid field 'base_url': host localhost is a loopback address, inside this service's network",
    ],
  ])("refuses %j naming the field", async (input, message) => {
    const { id: tenantId } = await newTenant();
    // What the dashboard's endpoint answers (its error formatter applies toAppError).
    const error = toAppError(
      await dashboardAs(tenantId, "admin")
        .crm.setConnection(input as never)
        .catch((e) => e),
    );
    expect(error.errorCode).toBe("bad_request");
    if (typeof message === "string") expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
    expect(await auditOf(tenantId)).toHaveLength(0);
  });

  it("updating the mapping of a tenant without a connection is a 404", async () => {
    const { id: tenantId } = await newTenant();
    await expect(dashboardAs(tenantId, "admin").crm.updateMapping({ field_mapping: { a: "b" } })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
