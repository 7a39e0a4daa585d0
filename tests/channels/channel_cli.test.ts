// `channel connect|list|disconnect` through the operator CLI's dispatcher (JSON on stdout): the
// credentials go in as flags and never come out; refusals are usage errors (exit code 2).
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../../server/cli/run-cli";
import { getDb } from "../../server/db/client";
import { decryptSecret } from "../../server/crypto/secret-box";
import { newTenant } from "../helpers/api";
import { TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "./fixtures";

async function cli(positionals: string[], flags: Record<string, string>) {
  let out = "";
  let err = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await runCli(positionals, flags);
    return { code, out: out ? JSON.parse(out) : undefined, err: err ? JSON.parse(err) : undefined, raw: out + err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("channel CLI commands", () => {
  it("exit_0_connects_lists_changes_and_disconnects_without_ever_printing_a_credential", async () => {
    const { id: tenantId } = await newTenant();
    const address = uniqueBusinessNumber();
    const connected = await cli(["channel", "connect"], {
      tenant: tenantId,
      provider: "twilio",
      channel: "sms",
      address,
      "account-sid": TWILIO_SID,
      "auth-token": TWILIO_TOKEN,
    });
    expect(connected).toMatchObject({ code: 0, out: { provider: "twilio", channel: "sms", address, status: "active", has_credentials: true } });
    expect(connected.raw).not.toContain(TWILIO_TOKEN);
    const id = connected.out.id;
    const row = await (await getDb()).channelConnection.findUniqueOrThrow({ where: { id } });
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted))).toEqual({ account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });

    const listed = await cli(["channel", "list"], { tenant: tenantId });
    expect(listed).toMatchObject({ code: 0, out: { data: [{ id, address }], has_more: false, next_cursor: null } });
    expect(listed.raw).not.toContain(TWILIO_TOKEN);

    const disabled = await cli(["channel", "connect"], { tenant: tenantId, id, status: "disabled" });
    expect(disabled).toMatchObject({ code: 0, out: { id, status: "disabled", has_credentials: true } });

    const audit = await (await getDb()).auditLog.findMany({ where: { tenantId, action: "channel_connection.changed" }, orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => [a.actorType, a.actorLabel, (a.details as { change: string }).change])).toEqual([
      ["operator", "cli", "created"],
      ["operator", "cli", "updated"],
    ]);

    expect((await cli(["channel", "disconnect", id], { tenant: tenantId })).out).toEqual({ deleted: true });
    expect((await cli(["channel", "list"], { tenant: tenantId })).out.data).toEqual([]);
  });

  it("exit_2_an_address_another_tenant_holds_and_a_move_without_credentials_are_refused", async () => {
    const address = uniqueBusinessNumber();
    const { id: first } = await newTenant();
    const { id: second } = await newTenant();
    const flags = { provider: "twilio", channel: "sms", address, "account-sid": TWILIO_SID, "auth-token": TWILIO_TOKEN };
    const own = await cli(["channel", "connect"], { tenant: first, ...flags });
    expect(own.code).toBe(0);
    expect(await cli(["channel", "connect"], { tenant: second, ...flags })).toMatchObject({
      code: 2,
      err: { error: `address '${address}' is already connected with provider 'twilio'` },
    });
    expect(await cli(["channel", "connect"], { tenant: first, id: own.out.id, address: uniqueBusinessNumber() })).toMatchObject({
      code: 2,
      err: { error: "missing required field 'credentials': changing the provider or address needs the credentials again" },
    });
  });

  it.each([
    [["channel", "connect"], { tenant: "acme" }, "--tenant must be a uuid"],
    [["channel", "connect"], { tenant: "00000000-0000-4000-8000-000000000000" }, "tenant 00000000-0000-4000-8000-000000000000 not found"],
    [
      ["channel", "connect"],
      { provider: "twilio", channel: "sms", address: "+97143001234", "account-sid": TWILIO_SID },
      "missing required field 'credentials.auth_token'",
    ],
    [["channel", "connect"], { channel: "sms", address: "+97143001234" }, "missing required field 'provider'"],
    [["channel", "disconnect", "nope"], {}, "CONNECTION_ID must be a uuid"],
  ])("exit_2_%j_%j", async (positionals, flags, message) => {
    const { id: tenantId } = await newTenant();
    const result = await cli(positionals, { tenant: tenantId, ...flags });
    expect(result).toMatchObject({ code: 2, err: { error: message } });
  });
});
