// "Test connection": one harmless authenticated read through the same guarded client the record
// writes use (target rules checked at connect time, no redirects, one timeout), so a wrong token,
// a wrong base URL or an unreachable CRM shows up before the first create-record call does.
import { STATUS_CODES } from "node:http";
import type { TenantDb } from "../db/tenant-scope";
import { conflict } from "../lib/errors";
import { decryptSecret } from "../crypto/secret-box";
import { guardedPost } from "../lib/guarded-post";
import { traceClientCall } from "../observability/tracing";
import type { CrmProvider } from "./drivers/providers";
import { crmTimeoutMs } from "./crm.service";
import type { CrmConnectionTest, TestCrmConnectionInput } from "./crm.types";
import { assertAllowedBaseUrl, assertCredentialsFor } from "./crm-connection";

/** The read each provider's test makes: nothing is created or changed. */
const TEST_PATHS: Record<CrmProvider, string> = {
  // The generic provider's API root (any 2xx means the token was accepted).
  http: "",
  // One contact at most: needs only the read scope a create-record token has anyway.
  hubspot: "/crm/v3/objects/contacts?limit=1",
};

const testRequestUrl = (provider: CrmProvider, baseUrl: string) => new URL(`${baseUrl.replace(/\/+$/, "")}${TEST_PATHS[provider]}`);

function describeStatus(status: number): string {
  const name = STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : "";
  if (status === 401 || status === 403) return `The CRM answered ${status}${name}: check the API token and its scopes.`;
  if (status === 404) return `The CRM answered 404${name}: check the base URL.`;
  return `The CRM answered ${status}${name}.`;
}

/** The provider, address and token to test: the form's unsaved ones when given, else the stored connection's. */
async function credentialsToTest(db: TenantDb, input: TestCrmConnectionInput) {
  const stored = await db.crmConnection.findFirst();
  const storedToken = () => (JSON.parse(decryptSecret(stored!.credentialsEncrypted)) as { token: string }).token;
  if (input) {
    assertAllowedBaseUrl(input.base_url);
    // The stored token never goes to another provider or address than the one it was given for.
    assertCredentialsFor(stored, input);
    return { provider: input.provider, baseUrl: input.base_url, token: input.token ?? storedToken() };
  }
  if (!stored) throw conflict("no CRM connection is configured for this tenant; connect one first");
  return { provider: stored.provider as CrmProvider, baseUrl: stored.baseUrl, token: storedToken() };
}

export async function testCrmConnection(db: TenantDb, input?: TestCrmConnectionInput): Promise<CrmConnectionTest> {
  const { provider, baseUrl, token } = await credentialsToTest(db, input);
  const url = testRequestUrl(provider, baseUrl);
  const request = `GET ${url.href}`;
  const timeoutMs = crmTimeoutMs();
  const started = performance.now();
  const result = await traceClientCall(
    "crm test_connection",
    { "crm.provider": provider, "http.request.method": "GET" },
    () =>
      guardedPost(url, {
        method: "GET",
        headers: { accept: "application/json", authorization: `Bearer ${token}` },
        body: Buffer.alloc(0),
        timeoutMs,
        keepBytes: 0,
        maxBytes: 64 * 1024,
      }),
    { finish: (r, span) => r.ok && span.setAttribute("http.response.status_code", r.statusCode) },
  );
  const done = (r: Pick<CrmConnectionTest, "ok" | "outcome" | "status_code" | "message">): CrmConnectionTest => ({
    ...r,
    duration_ms: Math.round(performance.now() - started),
    request,
    tested_at: new Date().toISOString(),
  });
  if (result.ok) {
    const ok = result.statusCode >= 200 && result.statusCode < 300;
    return done({
      ok,
      outcome: ok ? "ok" : "error_status",
      status_code: result.statusCode,
      message: ok ? `Connected: the CRM accepted the token (HTTP ${result.statusCode}).` : describeStatus(result.statusCode),
    });
  }
  if (result.reason === "timeout") return done({ ok: false, outcome: "timeout", status_code: null, message: `The CRM did not answer within ${timeoutMs} ms.` });
  if (result.reason === "refused") return done({ ok: false, outcome: "refused", status_code: null, message: `Not called: ${result.error}.` });
  return done({ ok: false, outcome: "network", status_code: null, message: `Could not reach the CRM (${result.error.replace(/^network error: /, "")}).` });
}
