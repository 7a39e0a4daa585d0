// The dashboard's channel procedures over real HTTP through the lean front: a member is refused
// (403) and nothing changes; an admin connects, and the answer never carries the credentials; the
// same address from a second tenant is a 409 naming `address`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { newTenant } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { SIGN_IN_ENV, signInOverHttp, trpcErrorOf, trpcOverHttp } from "../dashboard/http-session";
import { TWILIO_SID, TWILIO_TOKEN, uniqueBusinessNumber } from "./fixtures";

describe("channel connections over HTTP (lean front)", () => {
  let mount: Running;
  const cookies = { admin: "", member: "", otherOwner: "" };
  const address = uniqueBusinessNumber();
  const connectInput = { provider: "twilio", channel: "sms", address, credentials: { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN } };

  beforeAll(async () => {
    const { id: tenantId } = await newTenant();
    const { id: otherTenantId } = await newTenant();
    const emails = {
      admin: await userInTenant(tenantId, "admin"),
      member: await userInTenant(tenantId, "member"),
      otherOwner: await userInTenant(otherTenantId, "owner"),
    };
    mount = await startMount("lean", SIGN_IN_ENV);
    for (const who of ["admin", "member", "otherOwner"] as const) cookies[who] = await signInOverHttp(mount.url, emails[who]);
  });
  afterAll(async () => mount?.stop());

  it("403_a_member_cannot_connect_then_200_an_admin_connects_and_no_answer_carries_the_token", async () => {
    const refused = await trpcOverHttp(mount.url, cookies.member, "mutation", "channels.connect", connectInput);
    expect(trpcErrorOf(refused)).toEqual({ status: 403, code: "forbidden", message: "role 'member' cannot make changes; an owner or admin can" });
    const empty = await trpcOverHttp(mount.url, cookies.member, "query", "channels.list", {});
    expect(empty.body.result.data.data).toEqual([]);

    const connected = await trpcOverHttp(mount.url, cookies.admin, "mutation", "channels.connect", connectInput);
    expect(connected.status).toBe(200);
    expect(connected.body.result.data).toMatchObject({ provider: "twilio", channel: "sms", address, status: "active", has_credentials: true });
    const listed = await trpcOverHttp(mount.url, cookies.member, "query", "channels.list", {});
    expect(listed.body.result.data.data).toEqual([connected.body.result.data]);
    for (const answer of [connected, listed]) expect(answer.text).not.toContain(TWILIO_TOKEN);
  });

  it("409_the_same_address_from_another_tenant_names_address", async () => {
    const taken = await trpcOverHttp(mount.url, cookies.otherOwner, "mutation", "channels.connect", connectInput);
    expect(trpcErrorOf(taken)).toEqual({ status: 409, code: "conflict", message: `address '${address}' is already connected with provider 'twilio'` });
    expect(taken.body.error.data.field).toBe("address");
    const theirs = await trpcOverHttp(mount.url, cookies.otherOwner, "query", "channels.list", {});
    expect(theirs.body.result.data.data).toEqual([]);
  });
});
