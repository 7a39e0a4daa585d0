// "Test connection" on the CRM page: one authenticated GET through the guarded client against the
// local fake CRM, answered as ok, the CRM's status, a timeout or a network error; never the token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toAppError } from "../../server/lib/errors";
import { dashboardCaller, newTenant } from "../helpers/api";
import { closedPort, startFakeCrm, type FakeCrm } from "./fake-crm-server";
import { connectCrm, TOKEN } from "./connect";

// The fake CRM listens on 127.0.0.1, which only development and tests may call.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
process.env.CRM_TIMEOUT_MS = "500";

let crm: FakeCrm;
beforeAll(async () => {
  crm = await startFakeCrm({ kind: "json", status: 200, body: { results: [] } });
});
afterAll(() => crm.close());

// A user per tenant: the dashboard's per-user rate limit lives in Redis across runs.
const as = (tenantId: string, role: "owner" | "admin" | "member" = "admin") => dashboardCaller(tenantId, role, `user-${role}-${tenantId}`);

async function connected(provider: "http" | "hubspot", baseUrl = `${crm.url}/api/`) {
  const { id: tenantId } = await newTenant();
  await connectCrm(tenantId, { provider, baseUrl, mapping: {} });
  return tenantId;
}

describe("CRM test connection", () => {
  it("ok_when_the_crm_accepts_the_token_with_one_authenticated_get_and_no_body", async () => {
    crm.respond({ kind: "json", status: 200, body: { ok: true } });
    const tenantId = await connected("http");
    const before = crm.received.length;
    const result = await as(tenantId).crm.testConnection();
    expect(result).toEqual({
      ok: true,
      outcome: "ok",
      status_code: 200,
      duration_ms: expect.any(Number),
      request: `GET ${crm.url}/api`,
      message: "Connected: the CRM accepted the token (HTTP 200).",
      tested_at: expect.any(String),
    });
    expect(crm.received).toHaveLength(before + 1);
    const got = crm.received.at(-1)!;
    expect(got).toMatchObject({ method: "GET", path: "/api", body: "" });
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  it("hubspot_reads_at_most_one_contact", async () => {
    crm.respond({ kind: "json", status: 200, body: { results: [] } });
    const tenantId = await connected("hubspot", crm.url);
    const result = await as(tenantId, "owner").crm.testConnection();
    expect(result).toMatchObject({ ok: true, status_code: 200, request: `GET ${crm.url}/crm/v3/objects/contacts?limit=1` });
    expect(crm.received.at(-1)).toMatchObject({ method: "GET", path: "/crm/v3/objects/contacts?limit=1" });
  });

  it("the_crms_error_status_is_shown_with_what_to_check", async () => {
    crm.respond({ kind: "json", status: 401, body: { message: `bad token ${TOKEN}` } });
    const tenantId = await connected("http");
    const result = await as(tenantId).crm.testConnection();
    expect(result).toMatchObject({
      ok: false,
      outcome: "error_status",
      status_code: 401,
      message: "The CRM answered 401 Unauthorized: check the API token and its scopes.",
    });
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  it("a_crm_that_never_answers_is_a_timeout", async () => {
    crm.respond({ kind: "hang" });
    const tenantId = await connected("http");
    const result = await as(tenantId).crm.testConnection();
    expect(result).toMatchObject({ ok: false, outcome: "timeout", status_code: null, message: "The CRM did not answer within 500 ms." });
    expect(result.duration_ms).toBeGreaterThanOrEqual(495);
    crm.respond({ kind: "json", status: 200, body: {} });
  });

  it("nothing_listening_is_a_network_error", async () => {
    const tenantId = await connected("http", `http://127.0.0.1:${await closedPort()}`);
    const result = await as(tenantId).crm.testConnection();
    expect(result).toMatchObject({ ok: false, outcome: "network", status_code: null, message: "Could not reach the CRM (ECONNREFUSED)." });
  });

  it("without_a_connection_it_is_a_409_and_members_get_403", async () => {
    const { id: tenantId } = await newTenant();
    const error = toAppError(
      await as(tenantId)
        .crm.testConnection()
        .catch((e) => e),
    );
    expect(error.errorCode).toBe("conflict");
    expect(error.message).toBe("no CRM connection is configured for this tenant; connect one first");

    const other = await connected("http");
    const before = crm.received.length;
    await expect(as(other, "member").crm.testConnection()).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "role 'member' cannot make changes; an owner or admin can",
    });
    // The tenant without a connection never reaches another tenant's CRM.
    await as(tenantId)
      .crm.testConnection()
      .catch(() => null);
    expect(crm.received.length).toBe(before);
  });

  it("unsaved_credentials_are_tested_before_saving_and_nothing_is_stored", async () => {
    crm.respond({ kind: "json", status: 200, body: { ok: true } });
    const { id: tenantId } = await newTenant();
    const before = crm.received.length;
    const result = await as(tenantId).crm.testConnection({ provider: "http", base_url: `${crm.url}/unsaved/`, token: "unsaved-token-123" });
    expect(result).toEqual({
      ok: true,
      outcome: "ok",
      status_code: 200,
      duration_ms: expect.any(Number),
      request: `GET ${crm.url}/unsaved`,
      message: "Connected: the CRM accepted the token (HTTP 200).",
      tested_at: expect.any(String),
    });
    expect(crm.received).toHaveLength(before + 1);
    expect(crm.received.at(-1)!.headers.authorization).toBe("Bearer unsaved-token-123");
    expect(JSON.stringify(result)).not.toContain("unsaved-token-123");
    expect(await as(tenantId).crm.connection()).toBeNull();
  });

  it("unsaved_test_without_a_token_uses_the_stored_one_only_at_the_stored_address", async () => {
    crm.respond({ kind: "json", status: 200, body: { ok: true } });
    const tenantId = await connected("http");
    const same = await as(tenantId).crm.testConnection({ provider: "http", base_url: `${crm.url}/api/` });
    expect(same).toMatchObject({ ok: true, status_code: 200 });
    expect(crm.received.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const before = crm.received.length;
    const error = toAppError(
      await as(tenantId)
        .crm.testConnection({ provider: "http", base_url: `${crm.url}/elsewhere` })
        .catch((e) => e),
    );
    expect(error.errorCode).toBe("bad_request");
    expect(error.message).toBe("missing required field 'token': changing the provider or base_url needs the credentials again");
    expect(crm.received.length).toBe(before);
  });

  it("unsaved_test_input_is_bounded_and_checked_like_saving", async () => {
    const { id: tenantId } = await newTenant();
    const long = toAppError(
      await as(tenantId)
        .crm.testConnection({ provider: "http", base_url: crm.url, token: "x".repeat(4097) })
        .catch((e) => e),
    );
    expect(long.errorCode).toBe("bad_request");
    expect(long.message).toMatch(/^invalid field 'token'/);
    const inside = toAppError(
      await as(tenantId)
        .crm.testConnection({ provider: "http", base_url: "https://169.254.169.254/", token: "t" })
        .catch((e) => e),
    );
    expect(inside.errorCode).toBe("bad_request");
    expect(inside.message).toMatch(/^invalid field 'base_url': /);
    const noToken = toAppError(
      await as(tenantId)
        .crm.testConnection({ provider: "http", base_url: crm.url })
        .catch((e) => e),
    );
    expect(noToken.message).toBe("missing required field 'token': a new CRM connection needs credentials");
  });
});
