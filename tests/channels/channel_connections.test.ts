// Channel connections through the dashboard's tRPC procedures: owners and admins manage, members
// read; every change is audited without secrets; credentials are write-only (encrypted, never in an
// answer); an address belongs to one tenant (a second claim, from any tenant, is a 409, and a claim
// from another tenant is in the holder's audit log without naming the claimant); moving a
// connection to another provider or address needs the credentials again.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { decryptSecret } from "../../server/crypto/secret-box";
import { toAppError } from "../../server/lib/errors";
import { dashboardCaller, newTenant } from "../helpers/api";
import { spaced, TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "./fixtures";

const auditOf = async (tenantId: string) =>
  (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId, action: "channel_connection.changed" }, orderBy: { createdAt: "asc" } });

const twilioSms = (address: string, extra: Record<string, unknown> = {}) => ({
  provider: "twilio" as const,
  channel: "sms" as const,
  address,
  credentials: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN },
  ...extra,
});

const refusal = async (work: Promise<unknown>) => {
  const error = toAppError(
    await work.then(
      () => new Error("expected a refusal"),
      (e) => e,
    ),
  );
  return { code: error.errorCode, field: error.field, message: error.message };
};

describe("channel connections (dashboard tRPC)", () => {
  it("200_an_admin_connects_and_the_answer_and_audit_hold_no_credentials_while_the_row_holds_them_encrypted", async () => {
    const { id: tenantId } = await newTenant();
    const address = uniqueBusinessNumber();
    const admin = dashboardCaller(tenantId, "admin");
    const created = await admin.channels.connect(twilioSms(spaced(address)));
    expect(created).toEqual({
      id: expect.any(String),
      provider: "twilio",
      channel: "sms",
      address,
      status: "active",
      has_credentials: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(created)).not.toContain(TWILIO_TOKEN);

    const row = await (await openDatabase()).prisma.channelConnection.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.credentialsEncrypted).not.toContain(TWILIO_TOKEN);
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted))).toEqual({ account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });

    const [entry] = await auditOf(tenantId);
    expect(entry).toMatchObject({ actorType: "user", actorId: "user-admin", targetType: "channel_connection", targetId: created.id });
    expect(entry.details).toEqual({ change: "created", provider: "twilio", channel: "sms", address, status: "active", credentials_changed: true });
    expect(JSON.stringify(entry)).not.toContain(TWILIO_TOKEN);

    const listed = await dashboardCaller(tenantId, "member").channels.list({});
    expect(listed).toEqual({ data: [created], next_cursor: null, has_more: false });
    expect(JSON.stringify(listed)).not.toContain(TWILIO_TOKEN);
  });

  it("403_a_member_reads_but_cannot_connect_change_or_disconnect_and_nothing_is_audited", async () => {
    const { id: tenantId } = await newTenant();
    const created = await dashboardCaller(tenantId, "owner").channels.connect(twilioSms(uniqueBusinessNumber()));
    const member = dashboardCaller(tenantId, "member");
    const forbidden = { code: "forbidden", field: undefined, message: "role 'member' cannot make changes; an owner or admin can" };
    expect(await refusal(member.channels.connect(twilioSms(uniqueBusinessNumber())))).toEqual(forbidden);
    expect(await refusal(member.channels.update({ id: created.id, status: "disabled" }))).toEqual(forbidden);
    expect(await refusal(member.channels.disconnect({ id: created.id }))).toEqual(forbidden);
    expect((await member.channels.list({})).data).toEqual([created]);
    expect(await auditOf(tenantId)).toHaveLength(1);
  });

  it("409_an_address_connected_in_another_tenant_is_refused_without_naming_that_tenant_and_nothing_is_written", async () => {
    const address = uniqueBusinessNumber();
    const { id: first } = await newTenant();
    const { id: second } = await newTenant();
    await dashboardCaller(first, "owner").channels.connect(twilioSms(address));
    const owner = dashboardCaller(second, "owner");
    const expected = { code: "conflict", field: "address", message: `address '${address}' is already connected with provider 'twilio'` };
    expect(await refusal(owner.channels.connect(twilioSms(address)))).toEqual(expected);
    // The same number written another way is the same address.
    expect(await refusal(owner.channels.connect(twilioSms(spaced(address), { channel: "voice" })))).toEqual(expected);

    // Moving an existing connection onto the taken address: 409 too, and the connection stays as it was.
    const own = await owner.channels.connect(twilioSms(uniqueBusinessNumber()));
    expect(await refusal(owner.channels.update({ id: own.id, address, credentials: { account_sid: TWILIO_SID, auth_token: "other" } }))).toEqual(expected);
    expect((await owner.channels.list({})).data).toEqual([own]);
    expect((await auditOf(second)).map((e) => (e.details as { change: string }).change)).toEqual(["created"]);

    // The same address with another provider is another address.
    const retell = await owner.channels.connect({ provider: "retell", channel: "voice", address, credentials: { api_key: "key_retell_1" } });
    expect(retell).toMatchObject({ provider: "retell", address });
  });

  it("409_a_claim_from_another_tenant_is_in_the_holders_audit_log_naming_the_attempt_but_not_the_claimant", async () => {
    const address = uniqueBusinessNumber();
    const { id: holder } = await newTenant();
    const { id: claimant } = await newTenant();
    const held = await dashboardCaller(holder, "owner", "holder-owner").channels.connect(twilioSms(address));
    const claimer = dashboardCaller(claimant, "admin", "claimant-admin");
    const expected = { code: "conflict", field: "address", message: `address '${address}' is already connected with provider 'twilio'` };
    expect(await refusal(claimer.channels.connect(twilioSms(spaced(address), { channel: "whatsapp" })))).toEqual(expected);

    // The holder's owners see the attempt on their audit page: what was claimed, how, and when.
    const seen = await dashboardCaller(holder, "owner", "holder-owner").dashboard.auditLog.list({ action: "channel_connection.claimed_by_another_tenant" });
    expect(seen.data).toEqual([
      {
        id: expect.any(String),
        actor_type: "another_tenant",
        actor_id: null,
        actor_label: null,
        action: "channel_connection.claimed_by_another_tenant",
        target_type: "channel_connection",
        target_id: held.id,
        details: { provider: "twilio", channel: "whatsapp", address, through: "dashboard" },
        created_at: expect.any(String),
      },
    ]);
    // Nothing in the holder's log names the claimant's tenant or user.
    const holderLog = JSON.stringify(await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId: holder } }));
    expect(holderLog).not.toContain(claimant);
    expect(holderLog).not.toContain("claimant-admin");

    // The claimant's own log records its refusal, without the holder.
    const claimantEntries = async () =>
      (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId: claimant, action: "channel_connection.claim_refused" } });
    const [refused] = await claimantEntries();
    expect(refused).toMatchObject({ actorType: "user", actorId: "claimant-admin", targetType: "channel_connection", targetId: null });
    expect(refused.details).toEqual({ provider: "twilio", channel: "whatsapp", address, held_by: "another tenant" });
    expect(JSON.stringify(await (await openDatabase()).prisma.auditLog.findMany({ where: { tenantId: claimant } }))).not.toContain(holder);

    // Repeated claims within the hour (by connect or by moving a connection onto the address) are
    // refused alike; the holder was told once, the claimant's log has each.
    expect(await refusal(claimer.channels.connect(twilioSms(address)))).toEqual(expected);
    const own = await claimer.channels.connect(twilioSms(uniqueBusinessNumber()));
    expect(await refusal(claimer.channels.update({ id: own.id, address, credentials: { account_sid: TWILIO_SID, auth_token: "x" } }))).toEqual(expected);
    expect((await claimantEntries()).map((e) => (e.details as { channel: string }).channel).sort()).toEqual(["sms", "sms", "whatsapp"]);
    const holderClaims = async () =>
      (await openDatabase()).prisma.auditLog.count({ where: { tenantId: holder, action: "channel_connection.claimed_by_another_tenant" } });
    expect(await holderClaims()).toBe(1);

    // The holder's own second claim is the same 409 and tells no one.
    expect(await refusal(dashboardCaller(holder, "owner").channels.connect(twilioSms(address)))).toEqual(expected);
    expect(await holderClaims()).toBe(1);
    expect(await (await openDatabase()).prisma.auditLog.count({ where: { tenantId: holder, action: "channel_connection.claim_refused" } })).toBe(0);
  });

  it("400_moving_to_another_provider_or_address_without_credentials_names_credentials_and_keeps_the_stored_ones", async () => {
    const { id: tenantId } = await newTenant();
    const owner = dashboardCaller(tenantId, "owner");
    const created = await owner.channels.connect(twilioSms(uniqueBusinessNumber()));
    const expected = {
      code: "bad_request",
      field: "credentials",
      message: "missing required field 'credentials': changing the provider or address needs the credentials again",
    };
    expect(await refusal(owner.channels.update({ id: created.id, address: uniqueBusinessNumber() }))).toEqual(expected);
    expect(await refusal(owner.channels.update({ id: created.id, provider: "retell", channel: "voice" }))).toEqual(expected);

    // Other changes keep the stored credentials.
    const disabled = await owner.channels.update({ id: created.id, status: "disabled", channel: "whatsapp" });
    expect(disabled).toMatchObject({ status: "disabled", channel: "whatsapp", has_credentials: true });
    const row = await (await openDatabase()).prisma.channelConnection.findUniqueOrThrow({ where: { id: created.id } });
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted))).toEqual({ account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });

    // With the new provider's credentials the move is made and audited as a credentials change.
    const moved = await owner.channels.update({ id: created.id, provider: "retell", channel: "voice", credentials: { api_key: "key_new" } });
    expect(moved).toMatchObject({ provider: "retell", channel: "voice", address: created.address });
    expect((await auditOf(tenantId)).map((e) => [(e.details as any).change, (e.details as any).credentials_changed])).toEqual([
      ["created", true],
      ["updated", false],
      ["updated", true],
    ]);
    // A change that changes nothing writes no audit entry.
    await owner.channels.update({ id: created.id, status: "disabled" });
    expect(await auditOf(tenantId)).toHaveLength(3);
  });

  it("200_disconnect_frees_the_address_for_another_tenant_and_is_idempotent", async () => {
    const address = uniqueBusinessNumber();
    const { id: first } = await newTenant();
    const { id: second } = await newTenant();
    const admin = dashboardCaller(first, "admin");
    const created = await admin.channels.connect(twilioSms(address));
    expect(await admin.channels.disconnect({ id: created.id })).toEqual({ deleted: true });
    expect(await admin.channels.disconnect({ id: created.id })).toEqual({ deleted: false });
    expect((await admin.channels.list({})).data).toEqual([]);
    expect((await auditOf(first)).map((e) => (e.details as { change: string }).change)).toEqual(["created", "deleted"]);

    expect(await dashboardCaller(second, "owner").channels.connect(twilioSms(address))).toMatchObject({ address });
  });

  it("404_another_tenants_connection_cannot_be_changed_or_disconnected", async () => {
    const { id: first } = await newTenant();
    const { id: second } = await newTenant();
    const created = await dashboardCaller(first, "owner").channels.connect(twilioSms(uniqueBusinessNumber()));
    const intruder = dashboardCaller(second, "owner");
    expect(await refusal(intruder.channels.update({ id: created.id, status: "disabled" }))).toMatchObject({ code: "not_found" });
    expect(await intruder.channels.disconnect({ id: created.id })).toEqual({ deleted: false });
    expect((await dashboardCaller(first, "member").channels.list({})).data).toEqual([created]);
  });

  it.each([
    [
      { provider: "twilio", channel: "sms", address: "12345", credentials: { account_sid: TWILIO_SID, auth_token: "t" } },
      "address",
      "invalid field 'address': not a valid phone number; write it in E.164, e.g. +97143001234",
    ],
    [
      { provider: "whatsapp_cloud", channel: "whatsapp", address: "+97143001234", credentials: { app_secret: "s", verify_token: "v", access_token: "a" } },
      "address",
      "invalid field 'address': must be the WhatsApp Cloud phone_number_id (digits) for provider 'whatsapp_cloud'",
    ],
    [
      { provider: "retell", channel: "sms", address: "+97143001234", credentials: { api_key: "k" } },
      "channel",
      "invalid field 'channel': provider 'retell' serves voice",
    ],
    [
      { provider: "twilio", channel: "sms", address: "+97143001234", credentials: { account_sid: "nope", auth_token: "t" } },
      "credentials.account_sid",
      "invalid field 'credentials.account_sid': must be 'AC' followed by 32 hex characters",
    ],
    [
      { provider: "twilio", channel: "sms", address: "+97143001234", credentials: { account_sid: TWILIO_SID } },
      "credentials.auth_token",
      "missing required field 'credentials.auth_token'",
    ],
    [
      { provider: "twilio", channel: "sms", address: "+97143001234", credentials: { account_sid: TWILIO_SID, auth_token: "t", authtoken: "t" } },
      "credentials.authtoken",
      "unknown field 'credentials.authtoken'",
    ],
    [
      { provider: "twilio", channel: "sms", address: "+97143001234", credentials: { account_sid: TWILIO_SID, auth_token: "   " } },
      "credentials.auth_token",
      "invalid field 'credentials.auth_token': must not be blank",
    ],
    [
      { provider: "sinch", channel: "sms", address: "+97143001234", credentials: {} },
      "provider",
      "invalid field 'provider': must be one of twilio, whatsapp_cloud, retell, vapi",
    ],
    [
      { provider: "twilio", channel: "email", address: "+97143001234", credentials: {} },
      "channel",
      "invalid field 'channel': must be one of voice, sms, whatsapp",
    ],
    [{ provider: "twilio", channel: "sms", address: "+97143001234" }, "credentials", "missing required field 'credentials'"],
    [{ provider: "twilio", channel: "sms", address: "+97143001234", credentials: {}, webhook: "x" }, "webhook", "unknown field 'webhook'"],
  ])("400_refuses_%j_naming_the_field", async (input, field, message) => {
    const { id: tenantId } = await newTenant();
    expect(await refusal(dashboardCaller(tenantId, "admin").channels.connect(input as never))).toEqual({ code: "bad_request", field, message });
    expect(await auditOf(tenantId)).toHaveLength(0);
  });
});
