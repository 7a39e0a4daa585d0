// `channel connect|list|disconnect|move` through the operator CLI's dispatcher (JSON on stdout): the
// credentials go in as flags and never come out; refusals are usage errors (exit code 2). `channel
// move` gives an address another tenant holds to a tenant, audited in both without naming the other,
// and the holder's credentials never follow it.
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../../server/cli/run-cli";
import { openDatabase } from "../../server/db/database";
import { decryptSecret } from "../../server/crypto/secret-box";
import { findActiveConnection } from "../../server/channels/channel-connections";
import { toAppError } from "../../server/lib/errors";
import { dashboardCaller, newTenant } from "../helpers/api";
import { spaced, TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "./fixtures";

const changesOf = async (tenantId: string) =>
  (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "channel_connection.changed" }, orderBy: { createdAt: "asc" } });

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
    const row = await (await openDatabase()).prisma.channelConnection.findUniqueOrThrow({ where: { id } });
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted))).toEqual({ account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });

    const listed = await cli(["channel", "list"], { tenant: tenantId });
    expect(listed).toMatchObject({ code: 0, out: { data: [{ id, address }], has_more: false, next_cursor: null } });
    expect(listed.raw).not.toContain(TWILIO_TOKEN);

    const disabled = await cli(["channel", "connect"], { tenant: tenantId, id, status: "disabled" });
    expect(disabled).toMatchObject({ code: 0, out: { id, status: "disabled", has_credentials: true } });

    const audit = await (await openDatabase()).prisma.auditLog.findMany({
      where: { tenantId, action: "channel_connection.changed" },
      orderBy: { createdAt: "asc" },
    });
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

  it("exit_0_channel_move_gives_the_address_to_the_claimant_disabled_without_the_holders_credentials_audited_in_both", async () => {
    const address = uniqueBusinessNumber();
    const { id: holder } = await newTenant();
    const { id: claimant } = await newTenant();
    const squatterToken = "squatter-token-0b1c";
    const held = await cli(["channel", "connect"], {
      tenant: holder,
      provider: "twilio",
      channel: "sms",
      address,
      "account-sid": TWILIO_SID,
      "auth-token": squatterToken,
    });
    expect(held.code).toBe(0);
    const reason = "ticket 4711: Twilio console screenshot shows the number on their account";

    const moved = await cli(["channel", "move"], { provider: "twilio", address: spaced(address), "to-tenant": claimant, reason });
    expect(moved.code).toBe(0);
    expect(moved.out).toEqual({
      from_tenant: holder,
      connection: {
        id: expect.any(String),
        provider: "twilio",
        channel: "sms",
        address,
        status: "disabled",
        has_credentials: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(moved.raw).not.toContain(squatterToken);
    const id = moved.out.connection.id;
    expect((await cli(["channel", "list"], { tenant: holder })).out.data).toEqual([]);
    expect((await cli(["channel", "list"], { tenant: claimant })).out.data).toEqual([moved.out.connection]);
    // The holder's credentials stayed behind: the moved connection has none, and receives nothing yet.
    expect((await (await openDatabase()).prisma.channelConnection.findUniqueOrThrow({ where: { id } })).credentialsEncrypted).toBe("");
    expect(await findActiveConnection("twilio", address)).toBeNull();

    // Audited in both tenants, by the operator, with the reason; neither entry names the other tenant.
    const away = await changesOf(holder);
    expect(away.map((e) => [e.actorType, e.actorLabel, e.targetId, e.details])).toEqual([
      ["operator", "cli", held.out.id, { change: "created", provider: "twilio", channel: "sms", address, status: "active", credentials_changed: true }],
      [
        "operator",
        "cli",
        held.out.id,
        { change: "moved_away", provider: "twilio", channel: "sms", address, status: "active", credentials_changed: false, reason },
      ],
    ]);
    const here = await changesOf(claimant);
    expect(here.map((e) => [e.actorType, e.actorLabel, e.targetId, e.details])).toEqual([
      ["operator", "cli", id, { change: "moved_here", provider: "twilio", channel: "sms", address, status: "disabled", credentials_changed: false, reason }],
    ]);
    expect(JSON.stringify(away)).not.toContain(claimant);
    expect(JSON.stringify(here)).not.toContain(holder);

    // The new owner cannot make it active without credentials; connecting the address with theirs completes it.
    const owner = dashboardCaller(claimant, "owner");
    const refused = await owner.channels.update({ id, status: "active" }).then(
      () => null,
      (e) => toAppError(e),
    );
    expect([refused?.errorCode, refused?.field, refused?.message]).toEqual([
      "bad_request",
      "credentials",
      "missing required field 'credentials': this connection has none yet, and an active one needs them",
    ]);
    const completed = await owner.channels.connect({
      provider: "twilio",
      channel: "sms",
      address,
      credentials: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN },
    });
    expect(completed).toMatchObject({ id, status: "active", has_credentials: true });
    expect(await findActiveConnection("twilio", address)).toMatchObject({ id, tenantId: claimant });
    expect(
      (await changesOf(claimant)).map((e) => [(e.details as { change: string }).change, (e.details as { credentials_changed: boolean }).credentials_changed]),
    ).toEqual([
      ["moved_here", false],
      ["updated", true],
    ]);
    // The former holder now meets the 409 (and the new holder is told).
    expect(
      await cli(["channel", "connect"], {
        tenant: holder,
        provider: "twilio",
        channel: "sms",
        address,
        "account-sid": TWILIO_SID,
        "auth-token": squatterToken,
      }),
    ).toMatchObject({
      code: 2,
      err: { error: `address '${address}' is already connected with provider 'twilio'` },
    });
    expect(await (await openDatabase()).prisma.auditLog.count({ where: { tenantId: claimant, action: "channel_connection.claimed_by_another_tenant" } })).toBe(
      1,
    );
  });

  it("exit_0_channel_move_with_the_new_owners_credentials_is_active_at_once", async () => {
    const address = uniqueBusinessNumber();
    const { id: holder } = await newTenant();
    const { id: claimant } = await newTenant();
    await cli(["channel", "connect"], { tenant: holder, provider: "twilio", channel: "voice", address, "account-sid": TWILIO_SID, "auth-token": "old-token" });
    const moved = await cli(["channel", "move"], {
      provider: "twilio",
      address,
      "to-tenant": claimant,
      channel: "sms",
      reason: "ticket 12",
      "account-sid": TWILIO_SID,
      "auth-token": TWILIO_TOKEN,
    });
    expect(moved).toMatchObject({ code: 0, out: { from_tenant: holder, connection: { channel: "sms", status: "active", has_credentials: true } } });
    expect(moved.raw).not.toContain(TWILIO_TOKEN);
    const row = await (await openDatabase()).prisma.channelConnection.findUniqueOrThrow({ where: { id: moved.out.connection.id } });
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted))).toEqual({ account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });
    expect(await findActiveConnection("twilio", address)).toMatchObject({ tenantId: claimant, channel: "sms" });
    expect((await changesOf(claimant)).map((e) => e.details)).toEqual([
      { change: "moved_here", provider: "twilio", channel: "sms", address, status: "active", credentials_changed: true, reason: "ticket 12" },
    ]);
  });

  it("exit_2_channel_move_refuses_an_address_nobody_holds_one_the_tenant_holds_and_a_missing_reason", async () => {
    const address = uniqueBusinessNumber();
    const { id: holder } = await newTenant();
    const { id: other } = await newTenant();
    const move = (flags: Record<string, string>) => cli(["channel", "move"], { provider: "twilio", address, reason: "ticket 1", ...flags });
    expect(await move({ "to-tenant": other })).toMatchObject({ code: 2, err: { error: `no tenant holds address '${address}' with provider 'twilio'` } });
    await cli(["channel", "connect"], { tenant: holder, provider: "twilio", channel: "sms", address, "account-sid": TWILIO_SID, "auth-token": TWILIO_TOKEN });
    expect(await move({ "to-tenant": holder })).toMatchObject({
      code: 2,
      err: { error: `address '${address}' with provider 'twilio' is already held by tenant ${holder}` },
    });
    expect(await cli(["channel", "move"], { provider: "twilio", address, "to-tenant": other })).toMatchObject({
      code: 2,
      err: { error: "missing required field 'reason'" },
    });
    expect(await move({ "to-tenant": other, reason: "  " })).toMatchObject({ code: 2, err: { error: "invalid field 'reason': must not be blank" } });
    expect(await move({})).toMatchObject({ code: 2, err: { error: "--to-tenant is required" } });
    expect(await move({ "to-tenant": "00000000-0000-4000-8000-000000000000" })).toMatchObject({
      code: 2,
      err: { error: "tenant 00000000-0000-4000-8000-000000000000 not found" },
    });
    expect(await move({ "to-tenant": other, channel: "voice", provider: "retell" })).toMatchObject({
      code: 2,
      err: { error: `no tenant holds address '${address}' with provider 'retell'` },
    });
    // Nothing moved, nothing audited.
    expect((await changesOf(holder)).map((e) => (e.details as { change: string }).change)).toEqual(["created"]);
    expect(await changesOf(other)).toEqual([]);
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
