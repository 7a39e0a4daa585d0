// Dashboard test helpers: users with a role in a tenant, sign-in through better-auth's handler,
// and tRPC calls through the real /api/trpc handler with the session cookie.
import { randomUUID } from "node:crypto";
import { handleTrpcRequest } from "../../server/http/trpc-handler";
import { getAuth } from "../../server/dashboard/auth";
import { addMember, createDashboardUser } from "../../server/dashboard/users";
import type { Role } from "../../server/auth/principal";
import { openDatabase } from "../../server/db/database";

export const ORIGIN = "http://127.0.0.1:3000";
export const PASSWORD = "correct horse battery";

export async function userInTenant(tenantId: string, role: Role) {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.test`;
  await openDatabase();
  await createDashboardUser({ email, password: PASSWORD, name: `Test ${role}` });
  await addMember({ tenantId, email, role });
  return email;
}

export async function signIn(email: string, opts: { password?: string; ip?: string } = {}) {
  await openDatabase(); // as the server process does before it serves
  const auth = await getAuth();
  return auth.handler(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, host: "127.0.0.1:3000", "x-forwarded-for": opts.ip ?? "203.0.113.1" },
      body: JSON.stringify({ email, password: opts.password ?? PASSWORD }),
    }),
  );
}

/** Signs in and returns the Cookie header value of the new session. */
export async function sessionCookie(email: string): Promise<string> {
  const res = await signIn(email, { ip: `198.51.100.${Math.floor(Math.random() * 250) + 1}` });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

export type TrpcResult = {
  status: number;
  data?: any;
  error?: { message: string; data: { appCode: string; field: string | null; httpStatus: number } };
  body: any;
  headers: Headers;
};

export async function trpc(
  kind: "query" | "mutation",
  path: string,
  input: unknown,
  opts: { cookie?: string; origin?: string | null } = {},
): Promise<TrpcResult> {
  const headers: Record<string, string> = { host: "127.0.0.1:3000" };
  if (opts.cookie) headers.cookie = opts.cookie;
  const origin = opts.origin === undefined ? ORIGIN : opts.origin;
  if (origin) headers.origin = origin;
  let req: Request;
  if (kind === "query") {
    const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    req = new Request(`${ORIGIN}/api/trpc/${path}${qs}`, { headers });
  } else {
    req = new Request(`${ORIGIN}/api/trpc/${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(input ?? null),
    });
  }
  await openDatabase(); // as the server process does before it serves
  const res = await handleTrpcRequest(req);
  const body = await res.json();
  return { status: res.status, data: body?.result?.data, error: body?.error, body, headers: res.headers };
}
