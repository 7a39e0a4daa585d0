// Calls the /api/v1 contract. In-process through the shared handler by default; against a running
// server (either mount: Next route or the lean front) when API_BASE_URL is set.
import { getDb } from "../../server/db/client";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { issueApiKey } from "../../server/auth/api-keys";
import { OPERATOR } from "../../server/audit/record-audit";
import { SCOPES, type Scope } from "../../server/auth/principal";
import { createTenant } from "../../server/tenants/tenants";
import { handleRestRequest } from "../../server/http/rest-bridge";
import { appRouter } from "../../server/http/router";
import { createCallerFactory } from "../../server/trpc/trpc";
import { requestLogger } from "../../server/lib/log";
import { contractMismatch } from "./openapi-contract";

const ALL_SCOPES = [...SCOPES] as Scope[];

export type ApiResponse = { status: number; body: any; text: string; headers: Headers };

export async function call(
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const base = process.env.API_BASE_URL ?? "http://127.0.0.1";
  const request = new Request(`${base}/api/v1${path}`, { method, headers, body });
  const res = process.env.API_BASE_URL ? await fetch(request) : await handleRestRequest(request);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  // Every answer an API test receives must be one the OpenAPI document describes (on unless
  // API_CONTRACT_CHECK=0, e.g. to see a failing test's own assertion before the document's).
  if (process.env.API_CONTRACT_CHECK !== "0") {
    const mismatch = contractMismatch(method, path, res.status, parsed);
    if (mismatch) throw new Error(`the API contradicts its OpenAPI document: ${mismatch}`);
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

let counter = 0;
export async function newTenant(name = "Test tenant") {
  return createTenant({ name: `${name} ${process.pid}-${++counter}` });
}

export async function newKey(tenantId: string, scopes: Scope[] = ALL_SCOPES) {
  const db = scopeToTenant(await getDb(), tenantId);
  const { key, plaintext } = await issueApiKey(db, { name: "test key", scopes }, OPERATOR);
  return { id: key.id, key: plaintext };
}

/** A tenant with one all-scopes key. */
export async function tenantWithKey(scopes: Scope[] = ALL_SCOPES) {
  const tenant = await newTenant();
  const { id, key } = await newKey(tenant.id, scopes);
  return { tenantId: tenant.id, keyId: id, key };
}

export const errorOf = (code: string, message: string) => ({ error: { code, message } });

/** The router as the dashboard calls it: a signed-in user of `tenantId` with `role`. */
export function dashboardCaller(tenantId: string, role: "owner" | "admin" | "member" = "owner", userId = `user-${role}`) {
  return createCallerFactory(appRouter)({
    transport: "trpc",
    headers: new Headers(),
    requestId: "test",
    logger: requestLogger("test"),
    resHeaders: new Headers(),
    response: {},
    dashboardIdentity: async () => ({ userId, tenantId, role, email: `${role}@example.test` }),
  });
}
