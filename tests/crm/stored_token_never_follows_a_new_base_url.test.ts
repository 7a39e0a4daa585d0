// Issue 13, finding 4, replayed over real HTTP through the lean front: an admin pointed the CRM
// connection at a server of their choosing with no token, and the next create-record carried the
// stored token there. Now moving the connection (new base_url or provider) without the token is a
// 400 naming `token`, nothing reaches the new server, and base_url must be https. Moving it with
// the token works, and the audit entries never hold either token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { openDatabase } from "../../server/db/database";
import { newKey, newTenant } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { SIGN_IN_ENV, signInOverHttp, trpcOverHttp } from "../dashboard/http-session";
import { startFakeCrm, type FakeCrm } from "./fake-crm-server";
import { connectCrm, TOKEN } from "./connect";

// The fake CRMs listen on 127.0.0.1, which only the development allowance permits (here and in the mount).
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
const NEW_TOKEN = "attacker-chosen-crm-token-987654";

describe("the stored CRM token never follows a new base_url (lean front)", () => {
  let mount: Running;
  let tenantId: string;
  let apiKey: string;
  let adminCookie: string;
  let trusted: FakeCrm;
  let other: FakeCrm;

  beforeAll(async () => {
    trusted = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec_trusted" } });
    other = await startFakeCrm({ kind: "json", status: 201, body: { id: "rec_other" } });
    ({ id: tenantId } = await newTenant());
    apiKey = (await newKey(tenantId, ["crm:write"])).key;
    await connectCrm(tenantId, { provider: "http", baseUrl: trusted.url, mapping: { name: "full_name" } });
    const admin = await userInTenant(tenantId, "admin");
    mount = await startMount("lean", { ...SIGN_IN_ENV, WEBHOOK_ALLOW_LOOPBACK: "1" });
    adminCookie = await signInOverHttp(mount.url, admin);
  });
  afterAll(async () => {
    await mount?.stop();
    await Promise.all([trusted?.close(), other?.close()]);
  });

  const setConnection = (input: Record<string, unknown>) => trpcOverHttp(mount.url, adminCookie, "mutation", "crm.setConnection", input);
  const createRecord = () =>
    fetch(`${mount.url}/api/v1/crm/create-record`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ object: "contacts", fields: { name: "Sara" } }),
    });
  const refusal = (answer: { status: number; body: any }) => ({
    status: answer.status,
    code: answer.body?.error?.data?.appCode,
    field: answer.body?.error?.data?.field,
    message: answer.body?.error?.message,
  });

  it("400_moving_base_url_or_provider_without_the_token_then_create_record_reaches_only_the_trusted_crm", async () => {
    const moved = await setConnection({ provider: "http", base_url: other.url });
    expect(refusal(moved)).toEqual({
      status: 400,
      code: "bad_request",
      field: "token",
      message: "missing required field 'token': changing the provider or base_url needs the credentials again",
    });
    const switched = await setConnection({ provider: "hubspot", base_url: trusted.url });
    expect(refusal(switched)).toMatchObject({ status: 400, code: "bad_request", field: "token" });

    const res = await createRecord();
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ provider: "http", object: "contacts", crm_record_id: "rec_trusted", fields: { full_name: "Sara" } });
    expect(trusted.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`]);
    expect(other.received).toEqual([]);
  });

  it("400_a_plain_http_base_url_names_base_url", async () => {
    const answer = await setConnection({ provider: "http", base_url: "http://crm.example.com/api", token: NEW_TOKEN });
    expect(refusal(answer)).toEqual({ status: 400, code: "bad_request", field: "base_url", message: "invalid field 'base_url': must be an https URL" });
  });

  it("200_moving_with_the_token_sends_only_that_token_to_the_new_crm_and_no_audit_entry_holds_a_token", async () => {
    const moved = await setConnection({ provider: "http", base_url: other.url, token: NEW_TOKEN });
    expect(moved.status).toBe(200);
    expect(moved.body.result.data).toMatchObject({ provider: "http", base_url: other.url, has_credentials: true });
    expect(moved.text).not.toContain(NEW_TOKEN);

    const res = await createRecord();
    expect(res.status).toBe(201);
    expect(other.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${NEW_TOKEN}`]);
    expect(trusted.received).toHaveLength(1);

    await mount.stop(); // the embedded database takes one process: read the audit once the server is gone
    const audit = await (await openDatabase()).prisma.auditLog.findMany({
      where: { tenantId, action: "crm_connection.changed" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => [a.actorType, a.details as { change: string; base_url: string; credentials_changed: boolean }])).toEqual([
      ["operator", expect.objectContaining({ change: "created", base_url: trusted.url, credentials_changed: true })],
      ["user", expect.objectContaining({ change: "updated", base_url: other.url, credentials_changed: true })],
    ]);
    for (const secret of [TOKEN, NEW_TOKEN]) expect(JSON.stringify(audit)).not.toContain(secret);
  });
});
