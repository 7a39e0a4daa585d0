// `crm set` / `crm show` / `crm delete` through the operator CLI's dispatcher (JSON on stdout).
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../../server/cli/run-cli";
import { openDatabase } from "../../server/db/database";
import { newTenant } from "../helpers/api";

const TOKEN = "cli-secret-token-31337";

async function cli(positionals: string[], flags: Record<string, string>) {
  let out = "";
  let err = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await runCli(positionals, flags);
    return { code, out: out ? JSON.parse(out) : undefined, err: err ? { error: err.split("\n")[0].replace(/^error: /, "") } : undefined, raw: out + err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("crm CLI commands", () => {
  it("sets, shows and deletes a tenant's connection without ever printing the token", async () => {
    const { id: tenantId } = await newTenant();
    const set = await cli(["crm", "set"], {
      tenant: tenantId,
      provider: "http",
      "base-url": "https://crm.example.com/api",
      token: TOKEN,
      mapping: "name=firstname, phone=phone",
    });
    expect(set.code).toBe(0);
    expect(set.out).toMatchObject({
      provider: "http",
      base_url: "https://crm.example.com/api",
      field_mapping: { name: "firstname", phone: "phone" },
      has_credentials: true,
    });
    expect(set.raw).not.toContain(TOKEN);

    const shown = await cli(["crm", "show"], { tenant: tenantId });
    expect(shown.code).toBe(0);
    expect(shown.out.connection).toMatchObject({ provider: "http", has_credentials: true });
    expect(shown.raw).not.toContain(TOKEN);

    const audit = await (await openDatabase()).prisma.auditLog.findFirst({ where: { tenantId, action: "crm_connection.changed" } });
    expect(audit).toMatchObject({ actorType: "operator", actorLabel: "cli" });

    expect((await cli(["crm", "delete"], { tenant: tenantId })).out).toEqual({ deleted: true });
    expect((await cli(["crm", "show"], { tenant: tenantId })).out).toEqual({ connection: null });
  });

  it("exit_2_moving_the_connection_without_the_token_keeps_the_stored_one_where_it_was", async () => {
    const { id: tenantId } = await newTenant();
    await cli(["crm", "set"], { tenant: tenantId, provider: "http", "base-url": "https://crm.example.com/api", token: TOKEN });
    const message = "missing required field 'token': changing the provider or base_url needs the credentials again";
    for (const flags of [
      { provider: "http", "base-url": "https://evil.example.net/api" },
      { provider: "hubspot", "base-url": "https://crm.example.com/api" },
    ]) {
      expect(await cli(["crm", "set"], { tenant: tenantId, ...flags })).toMatchObject({ code: 2, err: { error: message } });
    }
    expect((await cli(["crm", "show"], { tenant: tenantId })).out.connection).toMatchObject({ provider: "http", base_url: "https://crm.example.com/api" });
    const moved = await cli(["crm", "set"], { tenant: tenantId, provider: "hubspot", "base-url": "https://api.hubapi.com", token: "new-token" });
    expect(moved).toMatchObject({ code: 0, out: { provider: "hubspot", base_url: "https://api.hubapi.com", has_credentials: true } });
  });

  it.each([
    [{ tenant: "acme", provider: "http", "base-url": "https://x.example.com", token: "t" }, "--tenant must be a uuid"],
    [
      { tenant: "00000000-0000-4000-8000-000000000000", provider: "http", "base-url": "https://x.example.com", token: "t" },
      "tenant 00000000-0000-4000-8000-000000000000 not found",
    ],
    [{ provider: "http", "base-url": "https://x.example.com", token: "t", mapping: "name" }, "--mapping entries must be canonical=crm_key (got 'name')"],
    [{ provider: "http", "base-url": "notaurl", token: "t" }, "invalid field 'base_url': must be an https URL"],
    [{ provider: "http", "base-url": "https://x.example.com" }, "missing required field 'token': a new CRM connection needs credentials"],
  ])("refuses %j with a usage error (exit 2)", async (flags, message) => {
    const { id: tenantId } = await newTenant();
    const res = await cli(["crm", "set"], { tenant: tenantId, ...flags } as Record<string, string>);
    expect(res.code).toBe(2);
    expect(res.err).toEqual({ error: message });
  });
});
